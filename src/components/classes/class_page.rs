//! One class: inviting students, its lessons (and adding one), its
//! students, and deleting it.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::use_params_map;

use super::ErrorLine;
use crate::{
    api::classes::get_class,
    components::{not_found::NotFound, page_title::PageTitle, top_bar::TopBar},
    models::{ClassLesson, ClassPage},
};

#[component]
pub fn ClassPageView() -> impl IntoView {
    let params = use_params_map();
    let class = Resource::new(move || params.read().get("id").unwrap_or_default(), get_class);
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted">"Loading the class…"</p> }>
                {move || Suspend::new(async move {
                    match class.await {
                        Ok(page) => Either::Left(view! { <main class="page classes-page"><Class page/></main> }),
                        // Missing and another teacher's look alike (the
                        // status, set by the server function, says which
                        // failure it was).
                        Err(_) => Either::Right(view! { <NotFound heading="Class not found" text="This class does not exist, or it belongs to another teacher."/> }),
                    }
                })}
        </Suspense>
    }
}

/// How a lesson stands with the class's students.
fn published(l: &ClassLesson) -> String {
    match l.published_revision {
        Some(v) if v == l.revision => format!("Published (version {v})"),
        Some(v) => format!("Published (version {v}; version {} not yet)", l.revision),
        None => "Not published".into(),
    }
}

#[component]
fn Class(page: ClassPage) -> impl IntoView {
    let ClassPage { class, own_lessons, join_link, coverage } = page;
    let id = class.id.clone();
    let addable: Vec<(String, String)> = own_lessons.into_iter().filter(|(lid, _)| !class.lessons.iter().any(|l| &l.id == lid)).collect();
    let lessons = class
        .lessons
        .iter()
        .map(|l| {
            view! {
                <li>
                    <a href=format!("/lessons/{}", l.id)>{l.title.clone()}</a>
                    " " <span class="muted">{published(l)}</span>
                    " " <a href=format!("/lessons/{}/results", l.id)>"Results"</a>
                    " "
                    <form method="post" action=format!("/classes/{id}/lessons/{}/remove", l.id) class="inline">
                        <button type="submit" class="quiet">"Remove"</button>
                    </form>
                </li>
            }
        })
        .collect_view();
    let students = class
        .students
        .iter()
        .map(|s| {
            view! {
                <li>
                    {s.email.clone()} " "
                    <form method="post" action=format!("/classes/{id}/students/{}/remove", s.id) class="inline">
                        <button type="submit" class="quiet" aria-label=format!("Remove {}", s.email)>"Remove"</button>
                    </form>
                </li>
            }
        })
        .collect_view();
    let add = (!addable.is_empty()).then(|| {
        view! {
            <form method="post" action=format!("/classes/{id}/lessons") class="inline-form">
                <label>
                    "Lesson to add "
                    <select name="lesson">
                        {addable.into_iter().map(|(lid, title)| view! { <option value=lid>{title}</option> }).collect_view()}
                    </select>
                </label>
                " "
                <button type="submit">"Add to class"</button>
            </form>
        }
    });
    view! {
        <PageTitle text=class.name.clone()/>
        <p><a href="/classes">"← Classes"</a></p>
        <h1>{class.name.clone()}</h1>
        <ErrorLine/>
        <section class="invite" aria-labelledby="invite-h">
            <h2 id="invite-h">"Invite students"</h2>
            <p>"Students join with this link, or with the code under “Join a class”."</p>
            <p><label>"Join link " <input class="join-link" readonly value=join_link size="48"/></label></p>
            <p>"Join code: " <strong class="join-code">{class.join_code.clone()}</strong></p>
            <form method="post" action=format!("/classes/{id}/code")>
                <button type="submit">"Renew code"</button>
                " " <span class="muted">"The old code and link stop working."</span>
            </form>
        </section>
        <section aria-labelledby="lessons-h">
            <h2 id="lessons-h">"Lessons"</h2>
            <p class="muted">"Students see a lesson once you publish it (on the lesson's page), and only the version you published."</p>
            <ul>
                {class.lessons.is_empty().then(|| view! { <li class="muted">"No lessons yet."</li> })}
                {lessons}
            </ul>
            {add}
        </section>
        <section aria-labelledby="students-h">
            <h2 id="students-h">"Students"</h2>
            <p class="muted">"A student you remove no longer sees this class's lessons; their answers are kept, and come back with them if they join again."</p>
            <ul>
                {class.students.is_empty().then(|| view! { <li class="muted">"Nobody has joined yet."</li> })}
                {students}
            </ul>
        </section>
        {(!coverage.is_empty()).then(|| view! {
            <section aria-labelledby="standards-h">
                <h2 id="standards-h">"Standards"</h2>
                <p class="muted">"The standards this class's lessons name, and how its students did on the exercises that name them."</p>
                <super::standards_page::CoverageTable rows=coverage/>
            </section>
        })}
        // Deleting cannot be undone: the browser asks for the box first.
        <form method="post" action=format!("/classes/{id}/delete") class="danger-zone">
            <label>
                <input type="checkbox" name="confirm" value="yes" required/>
                {format!(" Delete “{}”: its students will no longer see its lessons (the lessons and the answers stay). This cannot be undone.", class.name)}
            </label>
            " "
            <button type="submit" class="quiet">"Delete class"</button>
        </form>
    }
}
