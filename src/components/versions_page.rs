//! A lesson's Versions page: the versions made of it (for a reading level,
//! for English learners, in another language), each with its measured
//! reading level, and "Make a version"; on a version, the lesson it is a
//! version of. Plain forms, no browser code. A change of this lesson
//! reaches each version as a proposal there; the list says where one waits.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::{use_params_map, use_query_map};

use super::{
    not_found::{NotFound, MISSING_LESSON},
    page_title::PageTitle,
    top_bar::TopBar,
};
use crate::{api::lessons::get_versions, models::LessonVersions};

#[component]
pub fn VersionsPage() -> impl IntoView {
    let params = use_params_map();
    let page = Resource::new(move || params.read().get("id").unwrap_or_default(), get_versions);
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted">"Loading the versions…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(v) => Either::Left(view! { <main class="page classes-page"><Versions v/></main> }),
                    Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text=MISSING_LESSON/> }),
                }
            })}
        </Suspense>
    }
}

/// "1 change waits for you", for the changes the assistant proposed in a
/// version (those it carried from this lesson among them).
fn waiting_said(n: i64) -> String {
    if n == 1 { "1 change waits for you".into() } else { format!("{n} changes wait for you") }
}

#[component]
fn Versions(v: LessonVersions) -> impl IntoView {
    let LessonVersions { lesson_id, title, level, core, versions } = v;
    let error = use_query_map().with_untracked(|q| q.get("error")).map(|why| match why.as_str() {
        "input" => "Choose a grade from 1 to 12, or a language by its code (such as es or pt-BR).",
        "conflict" => "No version was made: a version's versions are made from its core, and a lesson has at most 12 versions.",
        _ => "The assistant could not start just now (it may be busy, or this month's budget is spent). Try again in a moment.",
    });
    let make = if let Some((core_id, core_title, label)) = core {
        Either::Left(view! {
            <p>"Version of " <a href=format!("/lessons/{core_id}")><em>{core_title}</em></a> ": " {label}</p>
            <p class="muted">"Make more versions from that lesson."</p>
        })
    } else {
        Either::Right(view! {
            <section aria-labelledby="make-head">
                <h2 id="make-head">"Make a version"</h2>
                <p class="muted">"A copy of this lesson, linked to it and keeping its exercises, that the assistant rewrites: it measures the reading level as it goes. When you change this lesson later, the assistant offers the same change in each version, for you to apply or discard there."</p>
                {error.map(|e| view! { <p class="notice" role="alert">{e}</p> })}
                <form method="post" action=format!("/lessons/{lesson_id}/versions") class="inline-form">
                    <input type="hidden" name="kind" value="grade"/>
                    <label>"At reading level grade " <input type="number" name="grade" min="1" max="12" step="0.5" value="4" required/></label>
                    " "
                    <button type="submit">"Make this version"</button>
                </form>
                <form method="post" action=format!("/lessons/{lesson_id}/versions") class="inline-form">
                    <input type="hidden" name="kind" value="learners"/>
                    <button type="submit">"Make a version for English learners"</button>
                </form>
                <form method="post" action=format!("/lessons/{lesson_id}/versions") class="inline-form">
                    <input type="hidden" name="kind" value="language"/>
                    <label>"In the language " <input name="language" maxlength="12" placeholder="es" required/></label>
                    " "
                    <button type="submit">"Make a translation"</button>
                </form>
            </section>
        })
    };
    view! {
        <PageTitle text=format!("Versions: {title}")/>
        <p><a href=format!("/lessons/{lesson_id}")>"← " {title.clone()}</a></p>
        <h1>"Versions: " {title.clone()}</h1>
        <p>"Reading level: " {level.unwrap_or_else(|| "not measured (too little text)".into())}</p>
        {make}
        {(!versions.is_empty()).then(|| view! {
            <h2>"Versions of this lesson"</h2>
            <ul class="versions">
                {versions.into_iter().map(|s| view! {
                    <li>
                        <a href=format!("/lessons/{}", s.id)>{s.title}</a>
                        " · " {s.label}
                        " · " <span class="muted">{s.level.map(|l| format!("measured {l}")).unwrap_or_else(|| "not measured".into())}</span>
                        {(s.waiting > 0).then(|| view! {
                            " · " <a class="waiting" href=format!("/lessons/{}", s.id)>{waiting_said(s.waiting)}</a>
                        })}
                    </li>
                }).collect_view()}
            </ul>
        })}
    }
}
