//! The conversation: user bubbles on the right, replies on the left with
//! their steps above them.

use leptos::{
    either::{Either, EitherOf3},
    html,
    prelude::*,
};

use super::{
    controller::Chat,
    review::{ChangeList, ProposalCards, StepOutcome, UndoButton},
    state::{Phase, Reply, Step, StepStatus, UiMessage},
};
use crate::chat::message::Role;

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
        <div class="msg assistant">
            <ThinkingSection reply/>
            <ToolCallsSection reply/>
            {move || (reply.phase.get() == Phase::Thinking).then(|| view! {
                <p class="thinking" role="status"><span class="spinner" aria-hidden="true"></span>" Thinking…"</p>
            })}
            <div class="reply markdown" class:streaming=streaming>
                <div class="md-blocks" node_ref=blocks></div>
                <div class="md-block md-tail" inner_html=move || reply.tail.get()></div>
            </div>
            <ProposalCards reply/>
            {move || match reply.phase.get() {
                Phase::Stopped => EitherOf3::A(view! { <p class="stopped">"Stopped."</p> }),
                Phase::Failed(message) => EitherOf3::B(view! {
                    <div class="reply-error" role="alert">
                        <p>{message}</p>
                        <button type="button" on:click=move |_| chat.send(reply.asked.get_value()) disabled=move || chat.turn.busy.get()>"Retry"</button>
                    </div>
                }),
                _ => EitherOf3::C(()),
            }}
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
/// "Done (N steps)", which opens and closes them.
#[component]
pub fn ToolCallsSection(reply: Reply) -> impl IntoView {
    let count = move || reply.steps.with(Vec::len);
    let over = move || reply.phase.get().is_over();
    let has_steps = move || count() > 0;
    let list = move || {
        view! {
            <ul class="steps">
                {reply.steps.get().into_iter().map(|step| view! { <ToolCallItem reply step/> }).collect_view()}
            </ul>
        }
    };
    view! {
        {move || has_steps().then(|| view! {
            <div class="tool-calls">
                {move || if over() {
                    let n = count();
                    Either::Left(view! {
                        <button type="button" class="steps-toggle" aria-expanded=move || reply.expanded.get().to_string()
                            on:click=move |_| reply.expanded.update(|e| *e = !*e)>
                            {format!("Done ({n} step{})", if n == 1 { "" } else { "s" })}
                        </button>
                        {move || reply.expanded.get().then(list)}
                    })
                } else {
                    Either::Right(list())
                }}
            </div>
        })}
    }
}

#[component]
pub fn ToolCallItem(reply: Reply, step: Step) -> impl IntoView {
    let (icon, class, label) = match &step.status {
        StepStatus::Running => ("", "running", "in progress"),
        StepStatus::Success => ("✓", "ok", "done"),
        StepStatus::Failed(_) => ("✗", "failed", "failed"),
        StepStatus::Proposed => ("?", "proposed", "waiting for your review"),
    };
    let error = match &step.status {
        StepStatus::Failed(e) => Some(e.clone()),
        _ => None,
    };
    // A proposal is shown under the reply, where it stays in view while it
    // waits (`ProposalCards`); an edit that landed lists its changes here.
    let landed = (step.status == StepStatus::Success).then_some(()).and(step.revision);
    let changes = (step.proposal.is_none() && !step.changes.is_empty()).then(|| step.changes.clone());
    let has_detail = !step.detail.is_empty() || error.is_some() || changes.is_some();
    let detail = step.detail.clone();
    let outcome = view! { <StepOutcome step=step.clone()/> };
    let undo = landed.map(|n| view! { <UndoButton reply step_id=step.id.clone() revision=n/> });
    view! {
        <li class=format!("step {class}")>
            <details>
                <summary>
                    {if class == "running" {
                        Either::Left(view! { <span class="spinner" aria-hidden="true"></span> })
                    } else {
                        Either::Right(view! { <span class="mark" aria-hidden="true">{icon}</span> })
                    }}
                    " " <span class="step-label">{step.label.clone()}</span>
                    <span class="sr-only">{format!(" ({label})")}</span>
                </summary>
                {has_detail.then(|| view! {
                    <div class="step-detail">
                        {(!detail.is_empty()).then(|| view! { <p>{detail.clone()}</p> })}
                        {changes.clone().map(|changes| view! { <ChangeList changes/> })}
                        {error.clone().map(|e| view! { <pre class="step-error">{e}</pre> })}
                    </div>
                })}
            </details>
            {undo}
            {(step.proposal.is_none()).then_some(outcome)}
        </li>
    }
}
