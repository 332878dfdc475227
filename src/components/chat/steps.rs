//! A group of a reply's steps (those called with no text between them):
//! listed live while they run, then, once the reply has gone on past them,
//! folded into "Done (N steps)", which opens and closes them. Each step is a keyed
//! component over its own memo (`review::step_view`): a progress event or a
//! decision redraws the text that changed and nothing else, so a `<details>`
//! the teacher opened stays open while the reply goes on.

use leptos::prelude::*;

use crate::components::client_view::{ClientView, IntoClientView};
use super::{
    review::{step_view, StepActions, StepChanges, StepView},
    state::{PartMark, Phase, Reply, Step, StepStatus},
};
use crate::chat::proposal::ProposalStatus;

/// The group of steps that is part `index` of a reply, from step `from` to
/// where the next group begins, with its fold once the reply has gone on
/// past it (or ended).
#[component]
pub fn Steps(reply: Reply, index: usize, from: usize, expanded: RwSignal<bool>) -> impl IntoView {
    let to = move || reply.parts.with(|p| p.iter().skip(index + 1).find_map(|m| if let PartMark::Steps { from, .. } = m { Some(*from) } else { None }));
    let ids = move || {
        let to = to();
        reply.steps.with(|s| {
            let end = to.unwrap_or(s.len()).min(s.len());
            s[from.min(end)..end].iter().map(|s| s.id.clone()).collect::<Vec<_>>()
        })
    };
    let count = move || ids().len();
    let over = move || reply.phase.with(Phase::is_over) || reply.parts.with(|p| p.len() > index + 1);
    // Nothing at all until there is a step; the fold only once the reply
    // is over; the list while it runs, and when the fold is opened.
    view! {
        <Show when=move || { count() > 0 }>
            <div class="tool-calls">
                <Show when=over>
                    <button
                        type="button"
                        class="steps-toggle"
                        aria-expanded=move || expanded.get().to_string()
                        on:click=move |_| expanded.update(|o| *o = !*o)
                    >{move || match count() {
                        1 => "Done (1 step)".to_string(),
                        n => format!("Done ({n} steps)"),
                    }}</button>
                </Show>
                <Show when=move || !over() || expanded.get()>
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

/// Beside a step: Undo for an edit that landed, and what came of it. Its
/// code (the calls that apply, discard and undo) is shared with the reply's
/// ending, in a part of its own: the steps' part stays small.
#[lazy]
fn step_actions_view(step: StepView, reply: Reply) -> ClientView {
    view! { <StepActions step reply/> }.into_client_view()
}

/// A piece of a step as a signal: every text and attribute of a step is a
/// `Signal` of one of a few types, so the code that draws and updates them
/// is compiled once per type rather than once per closure (the bundle's
/// size, measured by `make bench-islands`).
fn of<T: Clone + Send + Sync + 'static>(step: StepView, f: fn(&Step) -> T) -> Signal<T> {
    Signal::derive(move || step.with(f))
}

/// What the teacher decided about a held edit's step, once they did: the
/// step then says so rather than that it waits.
fn decided(s: &Step) -> Option<ProposalStatus> {
    s.proposal.as_ref().map(|p| p.status).filter(|st| *st != ProposalStatus::Pending)
}

#[component]
fn StepItem(step: StepView, reply: Reply) -> impl IntoView {
    let class = of(step, |s| match s.status {
        StepStatus::Running => "step running",
        StepStatus::Success => "step ok",
        StepStatus::Failed(_) => "step failed",
        StepStatus::Proposed => "step proposed",
    });
    let icon = of(step, |s| match (&s.status, decided(s)) {
        (StepStatus::Running, _) => "",
        (StepStatus::Success, _) | (StepStatus::Proposed, Some(ProposalStatus::Applied)) => "✓",
        (StepStatus::Failed(_), _) => "✗",
        (StepStatus::Proposed, Some(_)) => "–",
        (StepStatus::Proposed, None) => "?",
    });
    let running = of(step, |s| s.status == StepStatus::Running);
    let said = of(step, |s| match (&s.status, decided(s)) {
        (StepStatus::Running, _) => " (in progress)",
        (StepStatus::Success, _) => " (done)",
        (StepStatus::Failed(_), _) => " (failed)",
        (StepStatus::Proposed, Some(ProposalStatus::Applied)) if s.undone.is_some() => " (applied, then undone)",
        (StepStatus::Proposed, Some(ProposalStatus::Applied)) => " (applied)",
        (StepStatus::Proposed, Some(ProposalStatus::Discarded)) => " (discarded)",
        (StepStatus::Proposed, Some(_)) => " (replaced by a newer suggestion)",
        (StepStatus::Proposed, None) => " (waiting for your review)",
    });
    let label = of(step, |s| s.label.clone());
    let detail = of(step, |s| s.detail.clone());
    let no_detail = of(step, |s| s.detail.is_empty());
    let input = of(step, |s| s.input.clone());
    let output = of(step, |s| s.output.clone());
    let no_output = of(step, |s| s.output.is_empty());
    let error = of(step, |s| match &s.status {
        StepStatus::Failed(e) => e.clone(),
        _ => String::new(),
    });
    let no_error = of(step, |s| !matches!(s.status, StepStatus::Failed(_)));
    // A call under way that says how far it has come (in whole percent).
    let progress = of(step, |s| match (&s.status, &s.progress) {
        (StepStatus::Running, Some((message, _))) => message.clone(),
        _ => String::new(),
    });
    let no_progress = of(step, |s| !(s.status == StepStatus::Running && s.progress.is_some()));
    let percent = of(step, |s| s.progress.as_ref().and_then(|(_, f)| *f).map(|f| (f * 100.0) as u32).unwrap_or(0));
    let no_percent = of(step, |s| s.progress.as_ref().and_then(|(_, f)| *f).is_none());
    view! {
        <li class=class>
            <details>
                <summary>
                    <span class="spinner" aria-hidden="true" hidden=Signal::derive(move || !running.get())></span>
                    <span class="mark" aria-hidden="true" hidden=running>{icon}</span>
                    " "<span class="step-label">{label}</span>
                    <span class="sr-only">{said}</span>
                </summary>
                <div class="step-detail">
                    <p hidden=no_detail>{detail}</p>
                    <StepChanges step/>
                    <pre class="step-error" hidden=no_error>{error}</pre>
                    // What went in and what came out, as sent, for whoever wants to see exactly.
                    <details class="raw">
                        <summary>"Details"</summary>
                        <p>"Input"</p>
                        <pre>{input}</pre>
                        <p hidden=no_output>"Output"</p>
                        <pre hidden=no_output>{output}</pre>
                    </details>
                </div>
            </details>
            <p class="step-progress" hidden=no_progress>
                {progress}
                <span hidden=no_percent>" "<progress max="100" value=percent></progress></span>
            </p>
            {Suspend::new(step_actions_view(step, reply))}
        </li>
    }
}
