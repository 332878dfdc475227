//! `ChatSidebar`: the assistant beside the lesson.

use leptos::{html, prelude::*};

use crate::components::client_view::{ClientView, IntoClientView};
use super::{controller::Chat, input::ChatInput, messages::MessageList};
use crate::components::{client_only::client_only, lesson_state::LessonState};

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
            <ChatHead chat tutor/>
            <StatusNotes chat tutor/>
            {move || chat.notice.get().map(|m| view! { <p class="form-error" role="alert">{m}</p> })}
            <div class="messages" node_ref=list on:scroll=on_scroll aria-label="Conversation" role="log" aria-live="off">
                // The welcome of an empty chat, with its suggestion chips.
                <Show when=move || chat.list.loaded.get() && chat.conversation.messages.with(Vec::is_empty)>
                    <Welcome chat tutor chips/>
                </Show>
                // The conversation's code (replies, steps, proposals) comes
                // once the island is live, in a part of its own (`--split`):
                // the message box does not wait for it.
                {client_only("message-list", || Suspend::new(async {
                    // Both parts are asked for at once; the replies are
                    // drawn once the renderer is in too.
                    let _ = lazy_preload!(message_list_view);
                    message_list_view(markdown_renderer().await).await
                }))}
            </div>
            {move || behind.get().then(|| view! { <button type="button" class="jump" on:click=jump>"Jump to latest"</button> })}
            <Announcements chat/>
            <ChatInput/>
        </aside>
    }
}

/// The live region screen readers hear: each sentence a line of its own,
/// keyed, so a new one is added and the others are never drawn again (only
/// the new line is read); the oldest go past the few kept.
#[component]
fn Announcements(chat: Chat) -> impl IntoView {
    view! {
        <div class="sr-only announcements" aria-live="polite" aria-relevant="additions">
            <For each=move || chat.conversation.announce.get() key=|(n, _)| *n children=|(_, said)| view! { <p>{said}</p> }/>
        </div>
    }
}

/// The conversation, its code in a part of the bundle of its own.
#[lazy]
fn message_list_view(render: fn(&str) -> String) -> ClientView {
    view! { <MessageList render/> }.into_client_view()
}

/// The replies' markdown renderer (`chat::markdown::render`), a part of its
/// own: pulldown-cmark and its tables weigh more than the rest of the
/// conversation's code, and are not needed before the page is usable.
#[lazy]
fn markdown_renderer() -> fn(&str) -> String {
    crate::chat::markdown::render
}

/// What the sidebar says about the assistant: the offline demo's banner, why
/// it cannot work, the school's usage meter, or why nothing can be asked
/// (with "Add credits" for the admin). A student is told the demo's replies
/// are examples, and nothing meant for whoever runs the server.
#[component]
fn StatusNotes(chat: Chat, tutor: bool) -> impl IntoView {
    let notes = move || {
        chat.status.with(|s| {
            let s = s.as_ref()?;
            let how = if tutor {
                " The tutor's replies here are examples, not written by an AI."
            } else {
                " Replies are scripted, not written by an AI. To use a real model, set AI_API_KEY (and AI_PROVIDER) on the server and restart it; the README explains how."
            };
            let demo = s.demo.then(|| view! {
                <p class="demo-banner" role="note">
                    <strong>"Offline demo."</strong>
                    {how}
                </p>
            });
            let message = s.message.clone().map(|m| view! { <p class="form-error" role="alert">{m}</p> });
            let credits = (s.role == "admin").then(|| view! { " " <a href="/school#credits">"Add credits"</a> });
            let blocked = s.blocked.clone().map(|b| view! { <p class="form-error budget-spent" role="alert">{b}{credits}</p> });
            let meter = s.meter.clone().filter(|_| s.blocked.is_none()).map(|m| view! { <p class="usage-meter">{m}</p> });
            Some(view! { {demo}{message}{blocked}{meter} })
        })
    };
    view! { <div class="ai-status">{notes}</div> }
}

/// The chat picker (the lesson's chats, the open one selected) and New
/// chat, Rename and Delete, each disabled when it cannot be used now, and
/// for a teacher the open chat's export as Markdown or JSON (a student has
/// no use for a file format's name).
#[component]
fn ChatHead(chat: Chat, tutor: bool) -> impl IntoView {
    let busy = chat.turn.busy;
    let none = move || chat.list.current.with(Option::is_none);
    let options = move || {
        chat.list.sessions.with(|list| {
            if list.is_empty() {
                return view! { <option value="">"New chat"</option> }.into_any();
            }
            let current = chat.list.current.get();
            list.iter()
                .map(|s| {
                    let selected = current.as_deref() == Some(s.id.as_str());
                    view! { <option value=s.id.clone() selected=selected>{s.title.clone()}</option> }
                })
                .collect_view()
                .into_any()
        })
    };
    view! {
        <header class="chat-head">
            <label for="chat-picker" class="sr-only">"Chat"</label>
            <select
                id="chat-picker"
                class="chat-picker"
                disabled=move || busy.get()
                prop:value=move || chat.list.current.get().unwrap_or_default()
                on:change=move |ev| chat.switch(event_target_value(&ev))
            >{options}</select>
            <button type="button" class="quiet" disabled=move || busy.get() on:click=move |_| chat.new_chat()>"New chat"</button>
            <button type="button" class="quiet" disabled=none on:click=move |_| chat.rename()>"Rename"</button>
            <button type="button" class="quiet" disabled=move || busy.get() || none() on:click=move |_| chat.delete()>"Delete"</button>
            // Plain links: the server sends the file (`server::chats::export`).
            <span class="chat-export" hidden=move || tutor || none()>
                "Export: "
                <a href=move || export_url(&chat, "md") download aria-label="Export this chat as Markdown">"Markdown"</a>
                " · "
                <a href=move || export_url(&chat, "json") download aria-label="Export this chat as JSON">"JSON"</a>
            </span>
        </header>
    }
}

/// Where the open chat downloads as `format` (md or json).
fn export_url(chat: &Chat, format: &str) -> String {
    chat.list.current.with(|c| c.as_deref().map(|id| format!("/api/chats/{id}/export?format={format}")).unwrap_or_default())
}

/// The welcome, with suggestion chips that send themselves.
#[component]
fn Welcome(chat: Chat, tutor: bool, chips: [&'static str; 3]) -> impl IntoView {
    let hello = if tutor {
        "Hi! I'm your tutor. I can explain the lesson and give you hints, but the answers are yours to find."
    } else {
        "Hello! Ask me about this lesson, or tell me what to add or change."
    };
    let chips = chips.map(|c| view! { <button type="button" class="chip" on:click=move |_| chat.send(c.to_string())>{c}</button> });
    view! {
        <div class="welcome-host">
            <div class="welcome"><p>{hello}</p><div class="chips">{chips}</div></div>
        </div>
    }
}
