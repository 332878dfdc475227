//! The message box: Enter sends, Shift+Enter starts a new line; while a reply
//! is written the box is disabled and Stop takes the place of Send.

use leptos::{either::Either, prelude::*};

use super::controller::Chat;

#[component]
pub fn ChatInput() -> impl IntoView {
    let chat = expect_context::<Chat>();
    let send = move || {
        let text = chat.draft.get_untracked();
        if !text.trim().is_empty() && !chat.busy.get_untracked() {
            chat.draft.set(String::new());
            chat.send(text);
        }
    };
    view! {
        <form class="chat-input" on:submit=move |ev| { ev.prevent_default(); send(); }>
            <textarea
                aria-label="Message"
                rows="2"
                placeholder="Ask, or tell me what to change…"
                prop:value=move || chat.draft.get()
                disabled=move || chat.busy.get()
                on:input=move |ev| chat.draft.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                        ev.prevent_default();
                        send();
                    }
                }
            ></textarea>
            {move || if chat.busy.get() {
                Either::Left(view! { <button type="button" class="stop" on:click=move |_| chat.stop()>"Stop"</button> })
            } else {
                Either::Right(view! { <button type="submit" class="primary" disabled=move || chat.draft.with(|d| d.trim().is_empty())>"Send"</button> })
            }}
        </form>
    }
}
