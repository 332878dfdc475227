//! `ChatSidebar`: the assistant beside the lesson.

use leptos::{html, prelude::*, wasm_bindgen::JsCast};

use super::{controller::Chat, input::ChatInput, messages::MessageList};
use crate::{
    chat::message::AiStatus,
    components::{client_only::client_only, lesson_state::LessonState},
    lesson::{escape_attr, escape_text},
};

/// Suggestions shown in an empty chat; choosing one sends it.
const CHIPS: [&str; 3] = ["Add a fill-in-the-blank exercise", "Explain this lesson", "Check my exercises"];
/// The same for a student with the tutor.
const TUTOR_CHIPS: [&str; 3] = ["Explain this lesson", "Quiz me on this", "Help me with this exercise"];

#[component]
pub fn ChatSidebar() -> impl IntoView {
    let lesson = use_context::<LessonState>();
    let lesson_id = lesson.map(|l| l.id.get_value()).unwrap_or_default();
    let tutor = lesson.is_some_and(|l| l.tutor);
    let chips = if tutor { TUTOR_CHIPS } else { CHIPS };
    let chat = Chat::new(lesson_id, lesson);
    provide_context(chat);
    Effect::new(move |started: Option<()>| {
        if started.is_none() {
            chat.start();
            // The lesson's live stream is the teacher's; a student's page has none.
            if let Some(state) = lesson.filter(|_| !tutor) {
                crate::components::lesson_live::follow(state, chat);
            }
        }
    });

    // The header is drawn again when the chats change: the button just used
    // gets the keyboard focus back once it is (if it can still be used).
    let refocus = StoredValue::new(None::<String>);
    Effect::new(move |_| {
        chat.list.sessions.track();
        chat.list.current.track();
        chat.turn.busy.track();
        if let Some(action) = refocus.get_value() {
            request_animation_frame(move || {
                let selector = format!(".chat-head [data-action={action}]:not([disabled])");
                if let Some(b) = document().query_selector(&selector).ok().flatten() {
                    refocus.set_value(None);
                    let _ = b.unchecked_into::<leptos::web_sys::HtmlElement>().focus();
                }
            });
        }
    });
    let list = NodeRef::<html::Div>::new();
    // The reader is at the end of the conversation, so new content scrolls
    // into view. Scrolling up clears it; sending a message or opening a chat
    // sets it again.
    let follow = RwSignal::new(true);
    Effect::new(move |_| {
        chat.conversation.to_end.track();
        follow.set(true);
    });
    let behind = RwSignal::new(false);
    // Changed only when it changes: it is set on every frame of a reply.
    let set_behind = move |b: bool| behind.maybe_update(|old| std::mem::replace(old, b) != b);
    // Follow the reply while the reader is at the bottom; otherwise offer a
    // jump. Scrolling waits for the next frame, once however many chunks
    // arrived before it: measuring the list on every chunk would force a
    // layout each time.
    let frame_pending = StoredValue::new(false);
    Effect::new(move |_| {
        chat.conversation.tick.track();
        if frame_pending.get_value() {
            return;
        }
        frame_pending.set_value(true);
        request_animation_frame(move || {
            frame_pending.set_value(false);
            let Some(el) = list.get_untracked() else { return };
            if follow.get_untracked() {
                el.set_scroll_top(el.scroll_height());
                set_behind(false);
            } else {
                set_behind(true);
            }
        });
    });
    // Only the reader scrolling *up* stops the following. A scroll event
    // also arrives after our own scroll to the bottom, by which time more of
    // the reply may have come in; judged by distance alone, that would look
    // like the reader leaving the bottom.
    let last_top = StoredValue::new(0);
    let on_scroll = move |_| {
        if let Some(el) = list.get_untracked() {
            let top = el.scroll_top();
            if el.scroll_height() - top - el.client_height() < 40 {
                follow.set(true);
                set_behind(false);
            } else if top < last_top.get_value() {
                follow.set(false);
            }
            last_top.set_value(top);
        }
    };
    let jump = move |_| {
        if let Some(el) = list.get_untracked() {
            el.set_scroll_top(el.scroll_height());
        }
        follow.set(true);
        set_behind(false);
    };

    view! {
        <aside class="chat-pane" aria-label="Assistant">
            // The chat picker and its buttons as one HTML string (escaped),
            // with one handler for the buttons (`data-action`) and one for
            // the picker: far less code in the bundle than a typed view with
            // a closure per button and per attribute.
            <header class="chat-head"
                on:change=move |ev| chat.switch(event_target_value(&ev))
                on:click=move |ev| {
                    let target: leptos::web_sys::Element = event_target(&ev);
                    let action = target.get_attribute("data-action");
                    match action.as_deref() {
                        Some("new") => chat.new_chat(),
                        Some("rename") => chat.rename(),
                        Some("delete") => chat.delete(),
                        _ => return,
                    }
                    refocus.set_value(action);
                }
                inner_html=move || head_html(chat)>
            </header>
            <div class="ai-status" inner_html=move || chat.status.with(|s| s.as_ref().map(status_html).unwrap_or_default())></div>
            {move || chat.notice.get().map(|m| view! { <p class="form-error" role="alert">{m}</p> })}
            <div class="messages" node_ref=list on:scroll=on_scroll aria-label="Conversation" role="log" aria-live="off">
                // The welcome of an empty chat, with its suggestion chips
                // (one handler: the chip clicked says what to send).
                <div class="welcome-host" on:click=move |ev| {
                    let target: leptos::web_sys::Element = event_target(&ev);
                    if let Some(i) = target.get_attribute("data-chip").and_then(|i| i.parse::<usize>().ok()) {
                        chat.send(chips[i % chips.len()].to_string());
                    }
                } inner_html=move || if chat.list.loaded.get() && chat.conversation.messages.with(|m| m.is_empty()) { welcome_html(tutor, &chips) } else { String::new() }>
                </div>
                {client_only("message-list", || view! { <MessageList/> })}
            </div>
            {move || behind.get().then(|| view! { <button type="button" class="jump" on:click=jump>"Jump to latest"</button> })}
            <p class="sr-only" aria-live="polite">{move || chat.conversation.announce.get()}</p>
            <ChatInput/>
        </aside>
    }
}

/// What the sidebar says about the assistant: the offline demo's banner, why
/// it cannot work, the school's usage meter, or why nothing can be asked
/// (with "Add credits" for the admin). Written as HTML, its text escaped:
/// one string costs the bundle far less than a view for each.
fn status_html(s: &AiStatus) -> String {
    let mut html = String::new();
    if s.demo {
        html.push_str("<p class=\"demo-banner\" role=\"note\"><strong>Offline demo.</strong> Replies are scripted, not written by an AI. To use a real model, set AI_API_KEY (and AI_PROVIDER) on the server and restart it; the README explains how.</p>");
    }
    for (class, text) in [("form-error", &s.message), ("form-error budget-spent", &s.blocked)] {
        if let Some(text) = text {
            html.push_str(&format!("<p class=\"{class}\" role=\"alert\">{}", escape_text(text)));
            if s.blocked.as_ref() == Some(text) && s.role == "admin" {
                html.push_str(" <a href=\"/school#credits\">Add credits</a>");
            }
            html.push_str("</p>");
        }
    }
    if let (Some(meter), None) = (&s.meter, &s.blocked) {
        html.push_str(&format!("<p class=\"usage-meter\">{}</p>", escape_text(meter)));
    }
    html
}

/// The chat picker (the lesson's chats, the open one selected) and New
/// chat, Rename and Delete, each disabled when it cannot be used now.
fn head_html(chat: Chat) -> String {
    let busy = chat.turn.busy.get();
    let current = chat.list.current.get();
    let options = chat.list.sessions.with(|list| {
        if list.is_empty() {
            return "<option value=\"\">New chat</option>".to_string();
        }
        list.iter()
            .map(|s| {
                let selected = if current.as_deref() == Some(s.id.as_str()) { " selected" } else { "" };
                format!("<option value=\"{}\"{selected}>{}</option>", escape_attr(&s.id), escape_text(&s.title))
            })
            .collect::<String>()
    });
    let off = |d: bool| if d { " disabled" } else { "" };
    let (busy_off, none_off) = (off(busy), off(current.is_none()));
    let delete_off = off(busy || current.is_none());
    format!(
        "<label for=\"chat-picker\" class=\"sr-only\">Chat</label><select id=\"chat-picker\" class=\"chat-picker\"{busy_off}>{options}</select>\
         <button type=\"button\" class=\"quiet\" data-action=\"new\"{busy_off}>New chat</button>\
         <button type=\"button\" class=\"quiet\" data-action=\"rename\"{none_off}>Rename</button>\
         <button type=\"button\" class=\"quiet\" data-action=\"delete\"{delete_off}>Delete</button>"
    )
}

/// The welcome, and the suggestion chips as buttons that carry their place
/// in `chips`.
fn welcome_html(tutor: bool, chips: &[&str]) -> String {
    let chips: String = chips.iter().enumerate().map(|(i, c)| format!("<button type=\"button\" class=\"chip\" data-chip=\"{i}\">{c}</button>")).collect();
    let hello = if tutor {
        "Hi! I'm your tutor. I can explain the lesson and give you hints, but the answers are yours to find."
    } else {
        "Hello! Ask me about this lesson, or tell me what to add or change."
    };
    format!("<div class=\"welcome\"><p>{hello}</p><div class=\"chips\">{chips}</div></div>")
}
