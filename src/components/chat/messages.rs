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
use crate::{chat::message::Role, components::lesson_state::LessonState, lesson::escape_text};

#[component]
pub fn MessageList() -> impl IntoView {
    let chat = expect_context::<Chat>();
    view! {
        <For each=move || chat.conversation.messages.get() key=|m: &UiMessage| m.key children=move |m: UiMessage| {
            match (m.role, m.reply) {
                (Role::Assistant, Some(reply)) => Either::Left(view! { <AssistantMessage reply/> }),
                _ => Either::Right(view! { <UserMessage text=m.text/> }),
            }
        }/>
    }
}

#[component]
pub fn UserMessage(text: String) -> impl IntoView {
    view! { <div class="msg user"><div class="bubble">{text}</div></div> }
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
            <ThinkingSection reply/>
            <ToolCallsSection reply/>
            {move || (reply.phase.get() == Phase::Thinking).then(|| view! {
                <p class="thinking" role="status"><span class="spinner" aria-hidden="true"></span>" Thinking…"</p>
            })}
            <div class="reply markdown" class:streaming=streaming>
                <div class="md-blocks" node_ref=blocks></div>
                <div class="md-block md-tail" inner_html=move || reply.tail.get()></div>
            </div>
            <div class="proposals" inner_html=move || reply.steps.with(|s| review::proposals(s))></div>
            // What to do next, under the chat's last reply once it is done.
            <div class="suggestions" inner_html=move || {
                let last = chat.conversation.messages.with(|m| m.last().and_then(|x| x.reply).is_some_and(|r| r.phase == reply.phase));
                let off = chat.turn.busy.get() || chat.status.with(|s| s.as_ref().is_some_and(|s| s.blocked.is_some()));
                if last && reply.phase.get() == Phase::Done { suggestions::html(reply, off) } else { String::new() }
            }></div>
            // How it ended, if not well (Retry is handled by `review::act`).
            <div class="reply-end" inner_html=move || match reply.phase.get() {
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
/// closed once the reply starts, and opened again with its button. Plain
/// text, never markup.
#[component]
fn ThinkingSection(reply: Reply) -> impl IntoView {
    move || {
        reply.reasoning.with(|r| !r.is_empty()).then(|| {
            view! {
                <div class="thinking-section">
                    <button type="button" class="thinking-toggle"
                        aria-expanded=move || reply.thinking_open.get().to_string()
                        on:click=move |_| reply.thinking_open.update(|open| *open = !*open)>"Thinking"</button>
                    {move || reply.thinking_open.get().then(|| view! { <div class="reasoning">{move || reply.reasoning.get()}</div> })}
                </div>
            }
        })
    }
}

/// The steps: listed live while the reply is written, then folded into
/// "Done (N steps)", which opens and closes them. The button is a lasting
/// element (it keeps the keyboard focus while it opens and closes the
/// list); the list itself is drawn as HTML (see `steps`).
#[component]
pub fn ToolCallsSection(reply: Reply) -> impl IntoView {
    let count = move || reply.steps.with(Vec::len);
    let over = move || reply.phase.with(Phase::is_over);
    let list = move || {
        let shown = !over() || reply.expanded.get();
        reply.steps.with(|s| if shown { steps::list(s) } else { String::new() })
    };
    view! {
        {move || (count() > 0).then(|| view! {
            <div class="tool-calls">
                {move || over().then(|| view! {
                    <button type="button" class="steps-toggle" aria-expanded=move || reply.expanded.get().to_string()
                        on:click=move |_| reply.expanded.update(|e| *e = !*e)>
                        {move || { let n = count(); format!("Done ({n} step{})", if n == 1 { "" } else { "s" }) }}
                    </button>
                })}
                <div class="steps-host" inner_html=list></div>
            </div>
        })}
    }
}
