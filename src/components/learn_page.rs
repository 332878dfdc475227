//! A published lesson, for a student: the answer sheet (a server-drawn form
//! that saves as they type, `answer_sheet`), "Check answers" with the
//! score, the teacher's approved feedback under the answers (with a notice
//! when new feedback has come), and "Ask the tutor" opening the tutor's
//! chat beside it.
//!
//! Only the tutor is an island (the workspace's, with no document: see
//! `LessonWorkspace`), and its props are the lesson's id and title: no
//! answer, key or note ever reaches the browser's code.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::{use_params_map, use_query_map};

use super::{lesson_page::LessonWorkspace, not_found::NotFound, page_title::PageTitle, top_bar::TopBar};
use crate::{
    api::learn::get_student_lesson,
    lesson::LessonHtml,
    models::{Lesson, TutorPolicy},
};

#[component]
pub fn LearnPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let conflicts = query.read_untracked().get("conflicts").and_then(|n| n.parse::<u32>().ok()).unwrap_or(0);
    let lesson = Resource::new(id, get_student_lesson);
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted page">"Opening the lesson…"</p> }>
            {move || Suspend::new(async move {
                match lesson.await {
                    Ok(l) => Either::Left(view! {
                        <PageTitle text=l.title.clone()/>
                        <main class="lesson-layout learn-layout">
                            <section class="document-pane" aria-label="Lesson">
                                <h1 class="learn-title">{l.title.clone()}</h1>
                                {l.feedback_notice.map(|n| view! { <p class="notice feedback-notice" role="status">{n} " It is under each answer."</p> })}
                                <form class="answer-sheet" method="post" action=format!("/learn/lessons/{}/answers", l.id)>
                                    <input type="hidden" name="_seen" value=l.seen.to_string()/>
                                    <div class="lesson-view student" inner_html=l.html></div>
                                    <p class="sheet-status" role="status" aria-live="polite">
                                        {(conflicts > 0).then(|| format!("{conflicts} answers were changed in another tab or on another device, and were kept: they are shown here."))}
                                    </p>
                                    <div class="sheet-actions">
                                        <button type="submit" name="_check" value="1">"Check answers"</button>
                                        {l.score.map(|s| view! { <span class="score">"Score: " {s}</span> })}
                                    </div>
                                </form>
                            </section>
                            {if l.tutor == TutorPolicy::Off {
                                // The teacher's rule, said where the tutor would be.
                                Either::Left(view! { <aside class="tutor-pane tutor-off"><p class="tutor-policy" role="note">{l.tutor.for_students()}</p></aside> })
                            } else {
                                Either::Right(view! {
                                    <details class="tutor-pane">
                                        <summary>"Ask the tutor"</summary>
                                        {l.tutor.for_students().map(|s| view! { <p class="tutor-policy" role="note">{s}</p> })}
                                        // The workspace island with no document: only the tutor.
                                        <LessonWorkspace html=LessonHtml::default()
                                            lesson=Lesson { id: l.id, title: l.title, document_xml: String::new(), revision: 0, updated_at: String::new(), review_edits: false, edit_mode: Default::default() }/>
                                    </details>
                                })
                            }}
                        </main>
                    }),
                    Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text="This lesson is not published to any of your classes."/> }),
                }
            })}
        </Suspense>
    }
}
