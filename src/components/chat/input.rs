//! The message box: Enter sends, Shift+Enter starts a new line; while a reply
//! is written the box is disabled and Stop takes the place of Send.

use leptos::{either::Either, prelude::*};

use super::controller::Chat;
use crate::components::lesson_state::LessonState;

#[component]
pub fn ChatInput() -> impl IntoView {
    let chat = expect_context::<Chat>();
    let lesson = use_context::<LessonState>();
    // What the teacher is typing; it stays here until it is sent.
    let draft = RwSignal::new(String::new());
    let busy = chat.turn.busy;
    // The school's AI budget is spent: nothing can be asked until it is topped up.
    let blocked = move || chat.status.with(|s| s.as_ref().is_some_and(|s| s.blocked.is_some()));
    let send = move || {
        let text = draft.get_untracked();
        if !text.trim().is_empty() && !busy.get_untracked() && !blocked() {
            draft.set(String::new());
            chat.send(text);
        }
    };
    view! {
        <form class="chat-input" on:submit=move |ev| { ev.prevent_default(); send(); }>
            // The lesson text chosen with "Ask about this", until it is sent or removed.
            {move || lesson.and_then(|l| Some((l, l.asking.get()?))).map(|(l, s)| view! {
                <div class="asking">
                    <blockquote class="selection-chip">{s.text}</blockquote>
                    <button type="button" class="quiet" aria-label="Remove the selection" on:click=move |_| l.asking.set(None)>"×"</button>
                </div>
            })}
            <textarea
                aria-label="Message"
                rows="2"
                placeholder="Ask, or tell me what to change…"
                prop:value=move || draft.get()
                disabled=move || busy.get() || blocked()
                on:input=move |ev| draft.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                        ev.prevent_default();
                        send();
                    }
                }
            ></textarea>
            {move || if busy.get() {
                let stopping = chat.turn.stopping;
                Either::Left(view! {
                    <button type="button" class="stop" on:click=move |_| chat.stop() disabled=move || stopping.get()>
                        {move || if stopping.get() { "Stopping…" } else { "Stop" }}
                    </button>
                })
            } else {
                Either::Right(view! { <button type="submit" class="primary" disabled=move || draft.with(|d| d.trim().is_empty())>"Send"</button> })
            }}
        </form>
    }
}
