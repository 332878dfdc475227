//! The message box: Enter sends, Shift+Enter starts a new line; while a reply
//! is written the box is disabled and Stop takes the place of Send. Above
//! it, the lesson text chosen with "Ask about this", until it is sent or
//! removed.

use leptos::prelude::*;

use super::controller::Chat;
use crate::chat::message::SelectedText;

#[component]
pub fn ChatInput() -> impl IntoView {
    let chat = expect_context::<Chat>();
    let tutor = use_context::<crate::components::lesson_state::LessonState>().is_some_and(|l| l.tutor);
    // What the teacher is typing; it stays here until it is sent.
    let draft = RwSignal::new(String::new());
    let busy = chat.turn.busy;
    let stopping = chat.turn.stopping;
    // The school's AI budget is spent: nothing can be asked until it is topped up.
    let blocked = move || chat.status.with(|s| s.as_ref().is_some_and(|s| s.blocked.is_some()));
    let send = move || {
        let text = draft.get_untracked();
        if !text.trim().is_empty() && !busy.get_untracked() && !blocked() {
            draft.set(String::new());
            chat.send(text);
        }
    };
    let asking = chat.asking;
    let quoted = move || asking.and_then(|a| a.with(|s| s.as_deref().map(|s| SelectedText::unpacked(s).text)));
    view! {
        <form class="chat-input" on:submit=move |ev| { ev.prevent_default(); send(); }>
            // One structure, shown or hidden: cheaper for the bundle than a
            // view made and dropped with the selection.
            <div class="asking" hidden=move || quoted().is_none()>
                <blockquote class="selection-chip">{quoted}</blockquote>
                <button type="button" class="quiet" aria-label="Remove the selection" on:click=move |_| {
                    if let Some(a) = asking {
                        a.set(None);
                    }
                }>"×"</button>
            </div>
            <textarea
                aria-label="Message"
                rows="2"
                placeholder=if tutor { "Ask about this lesson…" } else { "Ask, or tell me what to change…" }
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
            // Send, or Stop while a reply is written: one button whose
            // words and job change (cheaper than two views swapped).
            <button
                type=move || if busy.get() { "button" } else { "submit" }
                class=move || if busy.get() { "stop" } else { "primary" }
                disabled=move || if busy.get() { stopping.get() } else { draft.with(|d| d.trim().is_empty()) }
                on:click=move |ev| {
                    if busy.get_untracked() {
                        ev.prevent_default();
                        chat.stop();
                    }
                }
            >{move || if !busy.get() { "Send" } else if stopping.get() { "Stopping…" } else { "Stop" }}</button>
        </form>
    }
}
