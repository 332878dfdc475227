//! A lesson's results: each student's progress and score, each a link to
//! their work.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::use_params_map;

use crate::{
    api::classes::get_results,
    components::{
        not_found::{NotFound, MISSING_LESSON},
        page_title::PageTitle,
        top_bar::TopBar,
    },
    models::{LessonResults, ResultRow},
};

#[component]
pub fn ResultsPage() -> impl IntoView {
    let params = use_params_map();
    let results = Resource::new(move || params.read().get("id").unwrap_or_default(), get_results);
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted">"Loading the results…"</p> }>
                {move || Suspend::new(async move {
                    match results.await {
                        Ok(r) => Either::Left(view! { <main class="page classes-page"><Results r/></main> }),
                        Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text=MISSING_LESSON/> }),
                    }
                })}
        </Suspense>
    }
}

fn score(r: &ResultRow) -> String {
    match (r.right, r.graded, &r.checked_at) {
        (Some(right), Some(graded), Some(_)) => format!("{right} of {graded} right"),
        _ => "Not checked yet".into(),
    }
}

/// The rows of a results table, each student a link to their work.
fn lines(lesson_id: &str, rows: Vec<ResultRow>) -> impl IntoView {
    rows.into_iter()
        .map(|r| {
            view! {
                <tr>
                    <td><a href=format!("/lessons/{lesson_id}/results/{}", r.student_id)>{r.email.clone()}</a></td>
                    <td>{format!("{} of {}", r.answered, r.total)}</td>
                    <td>{score(&r)}</td>
                </tr>
            }
        })
        .collect_view()
}

#[component]
fn Results(r: LessonResults) -> impl IntoView {
    let LessonResults { lesson_id, title, rows } = r;
    let (former, rows): (Vec<ResultRow>, Vec<ResultRow>) = rows.into_iter().partition(|r| r.former);
    let empty = rows.is_empty();
    // Students taken out of the class (or whose class was deleted) keep
    // their answers; they are listed apart.
    let former = (!former.is_empty()).then(|| {
        view! {
            <h2>"Former students"</h2>
            <p class="muted">"No longer in a class with this lesson. Their answers are kept."</p>
            <table class="results former">
                <thead><tr><th>"Student"</th><th>"Answered"</th><th>"Score"</th></tr></thead>
                <tbody>{lines(&lesson_id, former)}</tbody>
            </table>
        }
    });
    view! {
        <PageTitle text=format!("Results: {title}")/>
        <p><a href=format!("/lessons/{lesson_id}")>"← " {title.clone()}</a></p>
        <h1>"Results: " {title.clone()}</h1>
        <table class="results">
            <thead><tr><th>"Student"</th><th>"Answered"</th><th>"Score"</th></tr></thead>
            <tbody>
                {empty.then(|| view! { <tr><td colspan="3" class="muted">"No students yet: add this lesson to a class and invite them."</td></tr> })}
                {lines(&lesson_id, rows)}
            </tbody>
        </table>
        {former}
    }
}
