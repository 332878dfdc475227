//! The lesson's title at the top of the workspace, editable in place: Enter
//! saves it, Escape puts back the saved one. A title the server refuses
//! stays in the field, and the reason shows in the head's message line
//! (`error`, shared with "Review edits before applying").

use leptos::{prelude::*, web_sys::HtmlInputElement};

use super::{lesson_calls, lesson_state::LessonState};
use crate::refusals::MAX_LESSON_TITLE_CHARS;

#[component]
pub fn TitleField(error: RwSignal<String>) -> impl IntoView {
    let state = expect_context::<LessonState>();
    let keydown = move |ev: leptos::ev::KeyboardEvent| {
        let input: HtmlInputElement = event_target(&ev);
        match ev.key().as_str() {
            "Enter" => {
                let title = input.value().trim().to_string();
                leptos::task::spawn_local(async move {
                    let saved = lesson_calls::rename(&state.id.get_value(), title.clone()).await;
                    if saved.is_ok() {
                        document().set_title(&format!("{title} · Margin"));
                        state.title.set_value(title);
                    }
                    error.set(saved.err().unwrap_or_default());
                });
            }
            "Escape" => {
                input.set_value(&state.title.get_value());
                error.set(String::new());
            }
            _ => {}
        }
    };
    view! {
        <input class="lesson-title" aria-label="Lesson title" maxlength=MAX_LESSON_TITLE_CHARS.to_string()
            value=state.title.get_value() on:keydown=keydown/>
    }
}
