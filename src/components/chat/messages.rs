//! The conversation: user bubbles on the right, replies on the left with
//! their steps above them.

use leptos::{
    either::Either,
    html,
    prelude::*,
};

use super::{
    controller::Chat,
    review, steps, suggestions,
    state::{Phase, Reply, UiMessage},
};
use crate::{
    chat::message::{Attachments, Role},
    components::lesson_state::LessonState,
    lesson::escape_text,
};

#[component]
pub fn MessageList() -> impl IntoView {
    let chat = expect_context::<Chat>();
    view! {
        <For each=move || chat.conversation.messages.get() key=|m: &UiMessage| m.key children=move |m: UiMessage| {
            match (m.role, m.reply) {
                (Role::Assistant, Some(reply)) => Either::Left(view! { <AssistantMessage reply/> }),
                _ => Either::Right(view! { <div class=if m.trigger { "msg trigger" } else { "msg user" } inner_html=m.text></div> }),
            }
        }/>
    }
}

/// A teacher's message as HTML (escaped): the bubble, with the lesson text
/// it asks about quoted above it; or, for a turn the assistant started on
/// its own, the note of what started it in place of a bubble.
pub fn user_html(text: &str, attachments: Option<&Attachments>) -> (bool, String) {
    if let Some(trigger) = attachments.and_then(|a| a.trigger.as_deref()) {
        return (true, format!("<p class=\"trigger-note\">{}</p>", escape_text(trigger)));
    }
    let quote = attachments
        .and_then(|a| a.selected_text.as_ref())
        .map(|s| format!("<blockquote class=\"selection-chip\">{}</blockquote>", escape_text(&s.text)))
        .unwrap_or_default();
    (false, format!("{quote}<div class=\"bubble\">{}</div>", escape_text(text)))
}

#[component]
pub fn AssistantMessage(reply: Reply) -> impl IntoView {
    let chat = expect_context::<Chat>();
    let lesson = expect_context::<LessonState>();
    let streaming = move || reply.phase.get() == Phase::Streaming;
    // Finished blocks only ever grow at the end: each is added to the page
    // once, as it finishes, and never touched again. (A keyed list would
    // compare every block on each append, and costs more code.)
    let blocks = NodeRef::<html::Div>::new();
    let appended = StoredValue::new(0usize);
    Effect::new(move |_| {
        let Some(container) = blocks.get() else { return };
        reply.blocks.with(|all| {
            for block in all.iter().skip(appended.get_value()) {
                if let Ok(div) = document().create_element("div") {
                    div.set_class_name("md-block");
                    div.set_inner_html(block);
                    let _ = container.append_child(&div);
                }
            }
            appended.set_value(all.len());
        });
    });
    view! {
        <div class="msg assistant" on:click=move |ev| review::act(&ev, reply, lesson, chat)>
            <div class="thinking-host" inner_html=move || thinking_html(reply)></div>
            <div class="steps-area" inner_html=move || tool_calls_html(reply)></div>
            {move || (reply.phase.get() == Phase::Thinking).then(|| view! {
                <p class="thinking" role="status"><span class="spinner" aria-hidden="true"></span>" Thinking…"</p>
            })}
            <div class="reply markdown" class:streaming=streaming>
                <div class="md-blocks" node_ref=blocks></div>
                <div class="md-block md-tail" inner_html=move || reply.tail.get()></div>
            </div>
            <div class="proposals" inner_html=move || reply.steps.with(|s| review::proposals(s))></div>
            // How it ended: if not well, why (Retry is handled by
            // `review::act`); if well and it is the chat's last reply, what
            // it offers to do next.
            <div class="reply-end" inner_html=move || match reply.phase.get() {
                Phase::Done if chat.conversation.messages.with(|m| m.last().and_then(|x| x.reply).is_some_and(|r| r.phase == reply.phase)) => {
                    suggestions::html(reply, chat.turn.busy.get() || chat.status.with(|s| s.as_ref().is_some_and(|s| s.blocked.is_some())))
                }
                Phase::Stopped => "<p class=\"stopped\">Stopped.</p>".to_string(),
                Phase::Failed(message) => format!(
                    "<div class=\"reply-error\" role=\"alert\"><p>{}</p><button type=\"button\" data-action=\"retry\"{}>Retry</button></div>",
                    escape_text(&message),
                    if chat.turn.busy.get() { " disabled" } else { "" }
                ),
                _ => String::new(),
            }></div>
        </div>
    }
}

/// What a reasoning model thought, above its reply: open while it thinks,
/// closed once the reply starts, and opened again with its button
/// (`data-action="thinking"`, run by `review::act`). Plain text, never
/// markup. Drawn as HTML, like the steps: a typed view with its own toggle
/// cost the bundle about ten times the code.
fn thinking_html(reply: Reply) -> String {
    reply.reasoning.with(|r| {
        if r.is_empty() {
            return String::new();
        }
        let open = reply.thinking_open.get();
        let shown = if open { format!("<div class=\"reasoning\">{}</div>", escape_text(r)) } else { String::new() };
        format!("<div class=\"thinking-section\"><button type=\"button\" class=\"thinking-toggle\" data-action=\"thinking\" aria-expanded=\"{open}\">Thinking</button>{shown}</div>")
    })
}

/// The steps: listed live while the reply is written, then folded into
/// "Done (N steps)" (`data-action="steps"`, run by `review::act`), which
/// opens and closes them. Drawn as HTML (see `steps`); the handler puts the
/// keyboard focus back on the button once it is drawn again.
fn tool_calls_html(reply: Reply) -> String {
    reply.steps.with(|s| {
        let n = s.len();
        if n == 0 {
            return String::new();
        }
        let over = reply.phase.with(Phase::is_over);
        let expanded = reply.expanded.get();
        let button = if over {
            format!(
                "<button type=\"button\" class=\"steps-toggle\" data-action=\"steps\" aria-expanded=\"{expanded}\">Done ({n} step{})</button>",
                if n == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        let list = if !over || expanded { steps::list(s) } else { String::new() };
        format!("<div class=\"tool-calls\">{button}<div class=\"steps-host\">{list}</div></div>")
    })
}
