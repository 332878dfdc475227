//! A lesson's results: each student's progress and score, each a link to
//! their work; "Improve with these results", which hands them to the
//! assistant; and the teacher's "Tell the assistant when students get
//! answers wrong". Plain forms, no browser code.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::{
    api::classes::get_results,
    components::{
        not_found::{NotFound, MISSING_LESSON},
        page_title::PageTitle,
        top_bar::TopBar,
    },
    models::{FeedbackDraft, LessonResults, ResultRow},
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

/// Why "Improve with these results" did not start, as the server sent the
/// teacher back (`?improve=`).
fn improve_refusal(why: &str) -> Option<&'static str> {
    match why {
        "empty" => Some("No student has answered this lesson yet, so there is nothing to improve it with."),
        "busy" => Some("The assistant is busy with this lesson or your other replies. Try again when the reply under way has finished."),
        "budget" => Some("This month's assistant budget is spent, so the assistant cannot read the results now."),
        "unavailable" => Some("The assistant is not available right now. Try again in a moment."),
        _ => None,
    }
}

/// Why "Draft feedback" did not start (`?feedback=`).
fn feedback_refusal(why: &str) -> Option<&'static str> {
    match why {
        "empty" => Some("No student has answered the open questions yet, so there is nothing to give feedback on."),
        other => improve_refusal(other),
    }
}

/// One draft in the review queue: the student's answer, and the draft as
/// a form the teacher may edit before approving.
#[component]
fn Draft(lesson_id: String, d: FeedbackDraft) -> impl IntoView {
    let FeedbackDraft { student_id, email, item_id, prompt, answer, answer_changed, feedback, points, max_points } = d;
    let label = format!("Feedback for {email} on “{prompt}”");
    view! {
        <li class="draft">
            <p><strong>{email.clone()}</strong> " · " {prompt.clone()}</p>
            <blockquote class="student-answer">{answer}</blockquote>
            {answer_changed.then(|| view! { <p class="notice">"The answer changed after this was drafted: read it again before approving."</p> })}
            <form method="post" action=format!("/lessons/{lesson_id}/feedback")>
                <input type="hidden" name="student" value=student_id/>
                <input type="hidden" name="item" value=item_id/>
                <label class="stacked">{label} <textarea name="feedback" rows="3">{feedback}</textarea></label>
                {max_points.map(|max| view! {
                    <label>"Points " <input type="number" name="points" min="0" max=max value=points.map(|p| p.to_string()).unwrap_or_default()/> {format!(" of {max}")}</label>
                })}
                " "
                <button type="submit" name="action" value="approve">"Approve"</button>
                " "
                <button type="submit" name="action" value="discard" class="secondary">"Discard"</button>
            </form>
        </li>
    }
}

#[component]
fn Results(r: LessonResults) -> impl IntoView {
    let LessonResults { lesson_id, title, rows, tell_wrong_answers, open_items, drafts, deleted_students } = r;
    let refused = use_query_map().with_untracked(|q| q.get("improve")).and_then(|w| improve_refusal(&w));
    let feedback_refused = use_query_map().with_untracked(|q| q.get("feedback")).and_then(|w| feedback_refusal(&w));
    let answered = rows.iter().any(|r| r.answered > 0);
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
        {(deleted_students > 0).then(|| {
            let who = if deleted_students == 1 { "1 deleted student".to_string() } else { format!("{deleted_students} deleted students") };
            view! { <p class="muted deleted-students">{who}": their accounts were deleted by the school, with their answers."</p> }
        })}
        <section class="results-feedback" id="feedback">
            <h2>"Feedback on open answers"</h2>
            {feedback_refused.map(|text| view! { <p class="notice" role="alert">{text}</p> })}
            {if open_items.is_empty() {
                Either::Left(view! { <p class="muted">"This lesson has no short-answer questions or writing to give feedback on."</p> })
            } else {
                Either::Right(view! {
                    <form method="post" action=format!("/lessons/{lesson_id}/feedback/draft") class="inline-form">
                        <label>"Draft feedback on " <select name="item">
                            <option value="">"every open question"</option>
                            {open_items.into_iter().map(|(id, prompt)| view! { <option value=id>{prompt}</option> }).collect_view()}
                        </select></label>
                        " "
                        <button type="submit" disabled=!answered>"Draft feedback"</button>
                        " "
                        <span class="muted">"The assistant drafts feedback for each answer; you approve, edit or discard each one. Students see only what you approve."</span>
                    </form>
                })
            }}
            {(!drafts.is_empty()).then(|| {
                let n = drafts.len();
                view! {
                    <h3>{if n == 1 { "1 draft to review".to_string() } else { format!("{n} drafts to review") }}</h3>
                    <form method="post" action=format!("/lessons/{lesson_id}/feedback") class="inline-form">
                        <button type="submit" name="action" value="approve_all">"Approve all as drafted"</button>
                        " "
                        <button type="submit" name="action" value="discard_all" class="secondary">"Discard all"</button>
                    </form>
                    <ul class="drafts">
                        {drafts.into_iter().map(|d| view! { <Draft lesson_id=lesson_id.clone() d/> }).collect_view()}
                    </ul>
                }
            })}
        </section>
        <section class="results-actions">
            <h2>"With the assistant"</h2>
            {refused.map(|text| view! { <p class="notice" role="alert">{text}</p> })}
            <form method="post" action=format!("/lessons/{lesson_id}/improve")>
                <button type="submit" disabled=!answered>"Improve with these results"</button>
                " "
                <span class="muted">"The assistant reads the class's answers and proposes changes to the lesson, each with what in the results it answers. Nothing changes until you apply it."</span>
            </form>
            <form method="post" action="/settings/wrong-answers">
                <input type="hidden" name="lesson" value=lesson_id.clone()/>
                <label>
                    <input type="checkbox" name="tell" value="on" checked=tell_wrong_answers/>
                    " Tell the assistant when students get answers wrong"
                </label>
                " "
                <button type="submit">"Save"</button>
                <p class="muted">"For all your lessons. When students check their sheets, the assistant looks at the wrong answers and suggests in the lesson's chat; it does not change the lesson unless you ask."</p>
            </form>
        </section>
    }
}
