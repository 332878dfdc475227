//! The conversation: user bubbles on the right, replies on the left with
//! their thinking above them, their text and groups of steps in the order
//! they came, and what the teacher can do under them.

use leptos::{html, prelude::*};

use crate::components::client_view::{ClientView, IntoClientView};
use super::{
    controller::Chat,
    review::{MadeLessons, Proposals},
    state::{PartMark, Phase, Reply, UiMessage},
    steps::Steps,
    suggestions::Suggestions,
};

/// The replies' markdown renderer, loaded in a part of its own
/// (`sidebar::markdown_renderer`).
#[derive(Clone, Copy)]
struct Markdown(fn(&str) -> String);

#[component]
pub fn MessageList(render: fn(&str) -> String) -> impl IntoView {
    let chat = expect_context::<Chat>();
    provide_context(Markdown(render));
    // The steps' part and the reply end's come now that the page is live,
    // not with a reply's first step: fetched and compiled then, they would
    // hold the page's one thread while the reply's first events wait, and
    // those would be drawn together rather than as they came.
    Effect::new(|_| {
        let _ = lazy_preload!(steps_view);
        let _ = lazy_preload!(review_view);
    });
    view! {
        <For each=move || chat.conversation.messages.get() key=|m: &UiMessage| m.key children=move |m: UiMessage| {
            match m.reply {
                Some(reply) => view! { <AssistantMessage reply/> }.into_client_view(),
                None => view! { <UserMessage m/> }.into_client_view(),
            }
        }/>
    }
}

/// A teacher's message: the bubble, with the lesson text it asks about
/// quoted above it; or, for a turn the assistant started on its own, the
/// note of what started it in place of a bubble.
#[component]
fn UserMessage(m: UiMessage) -> impl IntoView {
    match m.trigger {
        Some(note) => view! { <div class="msg trigger"><p class="trigger-note">{note}</p></div> }.into_client_view(),
        None => view! {
            <div class="msg user">
                {m.quote.map(|q| view! { <blockquote class="selection-chip">{q}</blockquote> })}
                <div class="bubble">{m.text}</div>
            </div>
        }
        .into_client_view(),
    }
}

#[component]
pub fn AssistantMessage(reply: Reply) -> impl IntoView {
    let chat = expect_context::<Chat>();
    // The parts in the order they came: text, a group of steps, text…
    // A part, once begun, keeps its place and its start.
    let parts = move || reply.parts.get().into_iter().enumerate().collect::<Vec<_>>();
    view! {
        <div class="msg assistant">
            <Thinking reply/>
            <For each=parts key=|(i, _)| *i children=move |(index, part)| match part {
                PartMark::Text { from } => view! { <ReplyText reply index from/> }.into_client_view(),
                PartMark::Steps { from, expanded } => Suspend::new(steps_view(reply, index, from, expanded)).into_client_view(),
            }/>
            {move || (reply.phase.get() == Phase::Thinking).then(|| view! {
                <p class="thinking" role="status"><span class="spinner" aria-hidden="true"></span>" Thinking…"</p>
            })}
            {Suspend::new(review_view(reply, chat))}
        </div>
    }
}

/// One part of a reply's text: its finished blocks, and the growing tail
/// while it is the reply's last part. Finished blocks only ever grow at the
/// end: each is added to the page once, as it finishes, and never touched
/// again. Each is rendered here, by `chat::markdown::render` (loaded in a
/// part of its own, not with the page), whose sanitised output is the one
/// HTML the sidebar sets as HTML.
#[component]
fn ReplyText(reply: Reply, index: usize, from: usize) -> impl IntoView {
    let Markdown(render) = expect_context::<Markdown>();
    let last = move || reply.parts.with(|p| p.len() == index + 1);
    // Where the next part of text begins: this part's blocks end there.
    let to = move || reply.parts.with(|p| p.iter().skip(index + 1).find_map(|m| if let PartMark::Text { from } = m { Some(*from) } else { None }));
    let streaming = move || last() && reply.phase.get() == Phase::Streaming;
    let blocks = NodeRef::<html::Div>::new();
    let appended = StoredValue::new(from);
    Effect::new(move |_| {
        let Some(container) = blocks.get() else { return };
        let to = to();
        reply.blocks.with(|all| {
            let end = to.unwrap_or(all.len()).min(all.len());
            for block in all.iter().take(end).skip(appended.get_value()) {
                if let Ok(div) = document().create_element("div") {
                    div.set_class_name("md-block");
                    div.set_inner_html(&render(block));
                    let _ = container.append_child(&div);
                }
            }
            appended.set_value(end.max(appended.get_value()));
        });
    });
    view! {
        <div class="reply markdown" class:streaming=streaming>
            <div class="md-blocks" node_ref=blocks></div>
            // The growing block, only ever in the last part.
            <div class="md-block md-tail" inner_html=move || if last() { reply.tail.with(|t| render(t)) } else { String::new() }></div>
        </div>
    }
}

/// A group of a reply's steps, its code in a part of the bundle of its own
/// (`--split`): loaded with the first step, not before the page is usable.
#[lazy]
fn steps_view(reply: Reply, index: usize, from: usize, expanded: RwSignal<bool>) -> ClientView {
    view! { <Steps reply index from expanded/> }.into_client_view()
}

/// Under a reply: its proposals and how it ended (Retry, suggestions), in
/// the same part as the steps.
#[lazy]
fn review_view(reply: Reply, chat: Chat) -> ClientView {
    view! { <Proposals reply/><MadeLessons reply/><ReplyEnd reply chat/> }.into_client_view()
}

/// What a reasoning model thought, above its reply: open while it thinks,
/// closed once the reply starts, and opened again with its button. Plain
/// text, never markup.
#[component]
fn Thinking(reply: Reply) -> impl IntoView {
    view! {
        <div class="thinking-section" hidden=move || reply.reasoning.with(String::is_empty)>
            <button
                type="button"
                class="thinking-toggle"
                aria-expanded=move || reply.thinking_open.get().to_string()
                on:click=move |_| reply.thinking_open.update(|o| *o = !*o)
            >"Thinking"</button>
            <Show when=move || reply.thinking_open.get()>
                <div class="reasoning">{move || reply.reasoning.get()}</div>
            </Show>
        </div>
    }
}

/// How a reply ended: if not well, why, with Retry; if well and it is the
/// chat's last reply, what it offers to do next.
#[component]
fn ReplyEnd(reply: Reply, chat: Chat) -> impl IntoView {
    let last = move || chat.conversation.messages.with(|m| m.last().and_then(|x| x.reply).is_some_and(|r| r.phase == reply.phase));
    let off = Signal::derive(move || chat.turn.busy.get() || chat.status.with(|s| s.as_ref().is_some_and(|s| s.blocked.is_some())));
    // The chat's last reply is run again in its place; an older one can
    // only be asked again as a new message.
    let retry = move |_| {
        if chat.turn.busy.get_untracked() {
            return;
        }
        let asked = reply.asked.get_value();
        if last() {
            chat.retry(asked)
        } else {
            chat.send(asked)
        }
    };
    view! {
        <div class="reply-end">
            {move || match reply.phase.get() {
                Phase::Done if last() => Some(view! { <Suggestions reply off/> }.into_client_view()),
                Phase::Stopped => Some(view! { <p class="stopped">"Stopped."</p> }.into_client_view()),
                Phase::Failed(message) => Some(
                    view! {
                        <div class="reply-error" role="alert">
                            <p>{message}</p>
                            <button type="button" disabled=move || chat.turn.busy.get() on:click=retry>"Retry"</button>
                        </div>
                    }
                    .into_client_view(),
                ),
                _ => None,
            }}
        </div>
    }
}
