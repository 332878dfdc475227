//! A lesson's Standards page: the standards it names, by which exercises,
//! and how the students did on those exercises; and "Align to a standard":
//! search the school's frameworks by code or words, then Align, which asks
//! the assistant to tag or write exercises for it. Plain forms, no browser
//! code.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::{
    api::classes::get_lesson_standards,
    components::{
        not_found::{NotFound, MISSING_LESSON},
        page_title::PageTitle,
        top_bar::TopBar,
    },
    models::{Coverage, LessonStandards, StandardHit},
};

#[component]
pub fn StandardsPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let page = Resource::new(
        move || (params.read().get("id").unwrap_or_default(), query.read().get("q").unwrap_or_default()),
        |(id, q)| get_lesson_standards(id, q),
    );
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted">"Loading the standards…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(s) => Either::Left(view! { <main class="page classes-page"><Standards s/></main> }),
                    Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text=MISSING_LESSON/> }),
                }
            })}
        </Suspense>
    }
}

/// "7 of 12 right", or why there is nothing yet.
pub fn how_they_did(c: &Coverage) -> String {
    if c.marked == 0 {
        "No marked answers yet".into()
    } else {
        format!("{} of {} right", c.right, c.marked)
    }
}

/// The coverage table (also on a class's page).
#[component]
pub fn CoverageTable(rows: Vec<Coverage>) -> impl IntoView {
    view! {
        <table class="results coverage">
            <thead><tr><th>"Standard"</th><th>"Named by"</th><th>"Students"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|c| {
                    let did = how_they_did(&c);
                    let statement = if c.statement.is_empty() { "No longer in your school's frameworks.".to_string() } else { c.statement.clone() };
                    view! {
                        <tr>
                            <td><strong>{c.code.clone()}</strong><br/><span class="muted">{statement}</span></td>
                            <td>{c.tagged_by.join("; ")}</td>
                            <td>{did}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn Hit(lesson_id: String, h: StandardHit) -> impl IntoView {
    view! {
        <li class="standard-hit">
            <form method="post" action=format!("/lessons/{lesson_id}/align")>
                <input type="hidden" name="code" value=h.code.clone()/>
                <p><strong>{h.code.clone()}</strong> " · " <span class="muted">{h.framework}</span></p>
                <p>{h.statement}</p>
                <button type="submit" aria-label=format!("Align to {}", h.code)>"Align"</button>
            </form>
        </li>
    }
}

#[component]
fn Standards(s: LessonStandards) -> impl IntoView {
    let LessonStandards { lesson_id, title, coverage, has_frameworks, query, hits } = s;
    let refused = use_query_map().with_untracked(|q| q.get("align")).map(|why| match why.as_str() {
        "unknown" => "That code is not in your school's frameworks. Search again and pick one from the list.",
        _ => "The assistant could not start just now (it may be busy, or this month's budget is spent). Try again in a moment.",
    });
    let searched = !query.is_empty();
    let found = if !searched {
        None
    } else if hits.is_empty() {
        Some(Either::Left(view! { <p class="muted">"No standard matches. Try the start of a code (such as RL.4) or other words."</p> }))
    } else {
        let lesson_id = lesson_id.clone();
        Some(Either::Right(view! {
            <ul class="standard-hits">{hits.into_iter().map(|h| view! { <Hit lesson_id=lesson_id.clone() h/> }).collect_view()}</ul>
        }))
    };
    view! {
        <PageTitle text=format!("Standards: {title}")/>
        <p><a href=format!("/lessons/{lesson_id}")>"← " {title.clone()}</a></p>
        <h1>"Standards: " {title.clone()}</h1>
        {if coverage.is_empty() {
            Either::Left(view! { <p>"This lesson names no standards yet."</p> })
        } else {
            Either::Right(view! { <CoverageTable rows=coverage/> })
        }}
        <section id="align" aria-labelledby="align-head">
            <h2 id="align-head">"Align to a standard"</h2>
            {refused.map(|text| view! { <p class="notice" role="alert">{text}</p> })}
            {if has_frameworks {
                Either::Left(view! {
                    <p class="muted">"Find a standard of your school's frameworks; Align asks the assistant to tag the exercises that practise it, or to write one."</p>
                    <form method="get" action=format!("/lessons/{lesson_id}/standards") role="search">
                        <label for="standard-q">"Code or words"</label>
                        " "
                        <input id="standard-q" name="q" type="search" maxlength="200" value=query.clone()/>
                        " "
                        <button type="submit">"Search"</button>
                    </form>
                    {found}
                })
            } else {
                Either::Right(view! { <p>"Your school has no standards frameworks yet. Its admin adds them on the School page."</p> })
            }}
        </section>
    }
}
