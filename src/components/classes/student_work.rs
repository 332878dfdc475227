//! One student's work on a lesson: their sheet as the teacher sees it (read
//! only, with the answer key beside it), and their chats with the tutor.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::use_params_map;

use crate::{
    api::classes::get_student_work,
    components::{not_found::NotFound, page_title::PageTitle, top_bar::TopBar},
    models::{StudentWork, TutorLine},
};

#[component]
pub fn StudentWorkPage() -> impl IntoView {
    let params = use_params_map();
    let work = Resource::new(
        move || params.with(|p| (p.get("id").unwrap_or_default(), p.get("student").unwrap_or_default())),
        |(lesson, student)| get_student_work(lesson, student),
    );
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted">"Loading the student's work…"</p> }>
                {move || Suspend::new(async move {
                    match work.await {
                        Ok(w) => Either::Left(view! { <main class="page classes-page"><Work w/></main> }),
                        Err(_) => Either::Right(view! { <NotFound heading="Not found" text="This student is not in a class of yours that has this lesson."/> }),
                    }
                })}
        </Suspense>
    }
}

#[component]
fn Work(w: StudentWork) -> impl IntoView {
    let StudentWork { lesson_id, title, email, sheet_html, score, chats } = w;
    let empty = chats.is_empty();
    let talk = chats
        .into_iter()
        .map(|c| {
            let lines = c
                .messages
                .into_iter()
                .map(|m| match m {
                    // What the student typed is shown as text; the tutor's
                    // reply as the sidebar shows it (markdown, inert).
                    TutorLine::Student(text) => Either::Left(view! {
                        <div class="msg user"><span class="who">"Student"</span> " " <div class="bubble"><p>{text}</p></div></div>
                    }),
                    TutorLine::Tutor(html) => Either::Right(view! {
                        <div class="msg assistant"><span class="who">"Tutor"</span> " " <div class="bubble" inner_html=html></div></div>
                    }),
                })
                .collect_view();
            view! { <article class="tutor-chat"><h3>{c.title}</h3>{lines}</article> }
        })
        .collect_view();
    view! {
        <PageTitle text=format!("{email}: {title}")/>
        <p><a href=format!("/lessons/{lesson_id}/results")>"← Results"</a></p>
        <h1>{format!("{email}: {title}")}</h1>
        <p class="score">{score}</p>
        // The sheet as the student filled it in (rendered and escaped by
        // the server), read only.
        <section class="lesson-view student-work" aria-label="Answers">
            <fieldset disabled class="answer-sheet" inner_html=sheet_html></fieldset>
        </section>
        <section aria-labelledby="chats-h">
            <h2 id="chats-h">"Chats with the tutor"</h2>
            <p class="muted">"Read only."</p>
            {empty.then(|| view! { <p class="muted">"No chats with the tutor."</p> })}
            {talk}
        </section>
    }
}
