//! A reply's steps: listed live while the reply is written, then folded
//! into "Done (N steps)", which opens and closes them. Each step is a keyed
//! component over its own memo (`review::step_view`): a progress event or a
//! decision redraws the text that changed and nothing else, so a `<details>`
//! the teacher opened stays open while the reply goes on.

use leptos::prelude::*;

use super::{
    review::{step_view, StepActions, StepChanges, StepView},
    state::{Phase, Reply, StepStatus},
};

/// The steps of a reply, with the fold once it is over.
#[component]
pub fn Steps(reply: Reply) -> impl IntoView {
    let count = move || reply.steps.with(Vec::len);
    let over = move || reply.phase.with(Phase::is_over);
    let ids = move || reply.steps.with(|s| s.iter().map(|s| s.id.clone()).collect::<Vec<_>>());
    // Nothing at all until there is a step; the fold only once the reply
    // is over; the list while it runs, and when the fold is opened.
    view! {
        <Show when=move || { count() > 0 }>
            <div class="tool-calls">
                <Show when=over>
                    <button
                        type="button"
                        class="steps-toggle"
                        aria-expanded=move || reply.expanded.get().to_string()
                        on:click=move |_| reply.expanded.update(|o| *o = !*o)
                    >{move || match count() {
                        1 => "Done (1 step)".to_string(),
                        n => format!("Done ({n} steps)"),
                    }}</button>
                </Show>
                <Show when=move || !over() || reply.expanded.get()>
                    <div class="steps-host">
                        <ul class="steps">
                            <For each=ids key=|id| id.clone() children=move |id| view! { <StepItem step=step_view(reply, id) reply/> }/>
                        </ul>
                    </div>
                </Show>
            </div>
        </Show>
    }
}

#[component]
fn StepItem(step: StepView, reply: Reply) -> impl IntoView {
    let status = Memo::new(move |_| step.with(|s| s.status.clone()));
    let class = move || match status.get() {
        StepStatus::Running => "step running",
        StepStatus::Success => "step ok",
        StepStatus::Failed(_) => "step failed",
        StepStatus::Proposed => "step proposed",
    };
    let mark = move || match status.get() {
        StepStatus::Running => view! { <span class="spinner" aria-hidden="true"></span> }.into_any(),
        other => {
            let icon = match other {
                StepStatus::Success => "✓",
                StepStatus::Failed(_) => "✗",
                _ => "?",
            };
            view! { <span class="mark" aria-hidden="true">{icon}</span> }.into_any()
        }
    };
    let said = move || match status.get() {
        StepStatus::Running => " (in progress)",
        StepStatus::Success => " (done)",
        StepStatus::Failed(_) => " (failed)",
        StepStatus::Proposed => " (waiting for your review)",
    };
    let detail = move || step.with(|s| s.detail.clone());
    let error = move || match status.get() {
        StepStatus::Failed(e) => Some(view! { <pre class="step-error">{e}</pre> }),
        _ => None,
    };
    let output = move || step.with(|s| s.output.clone());
    // A call under way that says how far it has come (in whole percent).
    let progress = move || {
        step.with(|s| match (&s.status, &s.progress) {
            (StepStatus::Running, Some((message, fraction))) => Some((message.clone(), fraction.map(|f| (f * 100.0) as u32))),
            _ => None,
        })
        .map(|(message, percent)| {
            view! {
                <p class="step-progress">
                    {message}
                    {percent.map(|p| view! { " " <progress max="100" value=p></progress> })}
                </p>
            }
        })
    };
    view! {
        <li class=class>
            <details>
                <summary>
                    {mark}" "<span class="step-label">{move || step.with(|s| s.label.clone())}</span>
                    <span class="sr-only">{said}</span>
                </summary>
                <div class="step-detail">
                    <p hidden=move || detail().is_empty()>{detail}</p>
                    <StepChanges step/>
                    {error}
                    // What went in and what came out, as sent, for whoever wants to see exactly.
                    <details class="raw">
                        <summary>"Details"</summary>
                        <p>"Input"</p>
                        <pre>{move || step.with(|s| s.input.clone())}</pre>
                        <p hidden=move || output().is_empty()>"Output"</p>
                        <pre hidden=move || output().is_empty()>{output}</pre>
                    </details>
                </div>
            </details>
            {progress}
            <StepActions step reply/>
        </li>
    }
}
