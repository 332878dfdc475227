//! The teacher's home: their lessons, and "New lesson".
//!
//! The page is rendered on the server only. The one interactive part, the
//! "New lesson" button that opens the form, is a small island; the form
//! itself is a plain HTML form posting to `/lessons/new`, which answers with
//! a redirect to the new lesson, or back here with an error code and the
//! title that was typed.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::{hydrated::mark_hydrated, top_bar::TopBar};
use crate::{
    api::{error_text, lessons::list_lessons},
    refusals::{TitleRefusal, MAX_LESSON_TITLE_CHARS},
};

/// The sentence for an error code set by the `/lessons/new` form handler.
pub fn new_lesson_error(code: &str) -> String {
    TitleRefusal::from_code(code).message()
}

#[component]
pub fn LessonsPage() -> impl IntoView {
    let lessons = Resource::new(|| (), |_| list_lessons());
    let query = use_query_map();
    let error = query.read_untracked().get("error").map(|c| new_lesson_error(&c));
    let title = query.read_untracked().get("title").unwrap_or_default();

    view! {
        <Title text="Your lessons · Margin"/>
        <TopBar/>
        <main class="page">
            <NewLesson error title/>
            <Suspense fallback=|| view! { <p class="muted">"Loading your lessons…"</p> }>
                {move || Suspend::new(async move {
                    match lessons.await {
                        Ok(list) if list.is_empty() => Either::Left(Either::Left(view! {
                            <p class="empty">"No lessons yet. Press “New lesson” to start one."</p>
                        })),
                        Ok(list) => Either::Left(Either::Right(view! {
                            <ul class="lesson-list">
                                {list.into_iter().map(|l| view! {
                                    <li>
                                        <a href=format!("/lessons/{}", l.id)>{l.title}</a>
                                        <span class="muted">"Changed " {l.updated_at.get(..10).unwrap_or_default().to_string()}</span>
                                    </li>
                                }).collect_view()}
                            </ul>
                        })),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

/// The heading with "New lesson", which opens the form. The form starts open
/// when the last try failed, showing why and the title that was typed.
#[island]
fn NewLesson(error: Option<String>, title: String) -> impl IntoView {
    let asking = RwSignal::new(error.is_some());
    Effect::new(move |_| mark_hydrated());
    view! {
        <div class="page-head">
            <h1>"Your lessons"</h1>
            <button type="button" class="primary" on:click=move |_| asking.set(true)>"New lesson"</button>
        </div>
        {move || asking.get().then(|| view! {
            <form method="post" action="/lessons/new">
                <div class="new-lesson">
                    <label for="new-lesson-title">"Title"</label>
                    <input id="new-lesson-title" name="title" required maxlength=MAX_LESSON_TITLE_CHARS autofocus
                        placeholder="e.g. French verbs: the present tense" value=title.clone()/>
                    <button type="submit" class="primary">"Create lesson"</button>
                    <button type="button" class="quiet" on:click=move |_| asking.set(false)>"Cancel"</button>
                </div>
            </form>
            {error.clone().map(|msg| view! { <p class="form-error" role="alert">{msg}</p> })}
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::new_lesson_error;

    #[test]
    fn codes_become_sentences() {
        assert_eq!(new_lesson_error("title"), "Give the lesson a title.");
        assert!(new_lesson_error("title-long").contains("200"));
        assert!(new_lesson_error("<script>").contains("Something went wrong"));
    }
}
