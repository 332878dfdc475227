//! What the teacher sees and does about an edit of the assistant's: the
//! change list in the lesson's own terms, Apply, Preview and Discard for an
//! edit held for review, and Undo for one that landed. The lists arrive
//! worded by the server; nothing here compares documents.
//!
//! Typed components over one step (`StepView`, a memo of the reply's step
//! by id): a decision changes the step, and only the parts that show what
//! changed are drawn again. The buttons themselves stay, so the keyboard
//! focus stays on the one used; Apply becomes Undo in place (the same
//! button), which is where the teacher's next action is.

use leptos::{prelude::*, task::spawn_local};

use crate::components::client_view::IntoClientView;
use super::state::{Reply, Step, StepStatus};
use crate::{
    chat::{
        client::ask,
        proposal::{ProposalMark, ProposalStatus},
    },
    components::{lesson_calls, lesson_state::LessonState},
    lesson::{Change, ChangeKind},
    models::{SaveOutcome, SaveReply},
};

/// One step of a reply, followed by its id: its parts read it and are drawn
/// again only when it changes.
pub type StepView = Memo<Step>;

/// The step `id` of `reply`, as a memo (empty once it is gone).
pub fn step_view(reply: Reply, id: String) -> StepView {
    Memo::new(move |_| reply.steps.with(|s| s.iter().find(|x| x.id == id).cloned().unwrap_or_default()))
}

/// What the teacher can do to a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepAction {
    Apply,
    Preview,
    Discard,
    Undo,
}

/// The changes as a list, one line each, marked by kind.
#[component]
pub fn ChangeList(changes: Vec<Change>, label: &'static str) -> impl IntoView {
    let items = changes
        .into_iter()
        .map(|c| {
            let kind = match c.kind {
                ChangeKind::Added => "added",
                ChangeKind::Removed => "removed",
                ChangeKind::Edited => "edited",
                ChangeKind::Moved => "moved",
            };
            view! { <li class=kind>{c.text}</li> }
        })
        .collect_view();
    view! { <ul class="changes" aria-label=label>{items}</ul> }
}

/// What came of the teacher's last action on a step, with the changes it
/// collided with.
#[component]
fn Outcome(step: StepView) -> impl IntoView {
    move || {
        step.with(|s| {
            s.outcome.clone().map(|(ok, text)| {
                let conflicts = s.conflicts.clone();
                let said = view! { <p>{text}</p> };
                let collided = (!conflicts.is_empty()).then(|| view! { <ChangeList changes=conflicts label="Changes that collide"/> });
                if ok {
                    view! { <div class="form-ok" role="status">{said}{collided}</div> }.into_client_view()
                } else {
                    view! { <div class="form-error" role="alert">{said}{collided}</div> }.into_client_view()
                }
            })
        })
    }
}

/// The revision Undo takes back: the edit's own, or the one its proposal
/// was applied as; none once it was undone.
fn undo_revision(s: &Step) -> Option<i64> {
    if s.undone.is_some() {
        return None;
    }
    match (&s.status, s.revision, &s.proposal) {
        (_, _, Some(p)) if p.status == ProposalStatus::Applied => p.revision,
        (StepStatus::Success, Some(n), None) => Some(n),
        _ => None,
    }
}

/// The edits of a reply held for review, shown under its text: they stay in
/// view (the steps fold away once the reply ends) until the teacher decides.
#[component]
pub fn Proposals(reply: Reply) -> impl IntoView {
    let held = move || reply.steps.with(|s| s.iter().filter(|s| s.proposal.is_some()).map(|s| s.id.clone()).collect::<Vec<_>>());
    view! {
        <div class="proposals">
            <For each=held key=|id| id.clone() children=move |id| view! { <ProposalCard step=step_view(reply, id) reply/> }/>
        </div>
    }
}

/// The lessons a reply made (`create_lesson`), each a card with "Open": in
/// view under the reply, as proposals are, since the steps fold away.
#[component]
pub fn MadeLessons(reply: Reply) -> impl IntoView {
    move || {
        reply.made.with(|made| {
            made.iter()
                .map(|l| {
                    let href = format!("/lessons/{}", crate::url::percent_encode(&l.id));
                    view! {
                        <div class="made-lesson" role="group" aria-label="New lesson">
                            <p>"New lesson: "<strong>{l.title.clone()}</strong></p>
                            <a class="button" href=href>"Open"</a>
                        </div>
                    }
                })
                .collect_view()
        })
    }
}

#[component]
fn ProposalCard(step: StepView, reply: Reply) -> impl IntoView {
    let lesson = expect_context::<LessonState>();
    let status = move || step.with(|s| s.proposal.as_ref().map(|p| p.status));
    let pending = move || status() == Some(ProposalStatus::Pending);
    // What the change answers in the class's results, when it came from
    // them, on its own line of the head (`white-space: pre-line`): a line of
    // text rather than one more element, which costs the bundle kilobytes.
    let head = move || {
        step.with(|s| {
            let Some(mark) = &s.proposal else { return String::new() };
            let status = match (mark.status, mark.revision, mark.reason.as_deref()) {
                (ProposalStatus::Pending, ..) => "Waiting for your review: nothing has changed yet.".to_string(),
                (ProposalStatus::Applied, Some(n), _) => match s.undone {
                    Some(u) => format!("Undone: version {u} took back version {n}."),
                    None => format!("Applied as version {n}."),
                },
                (ProposalStatus::Applied, None, _) => "Applied.".to_string(),
                (ProposalStatus::Discarded, _, Some(r)) => format!("Discarded: “{r}”"),
                (ProposalStatus::Discarded, _, None) => "Discarded.".to_string(),
                (ProposalStatus::Replaced, ..) => "Replaced by a newer suggestion.".to_string(),
            };
            if s.evidence.is_empty() { status } else { format!("{status}\nFrom your class's results: {}", s.evidence) }
        })
    };
    // Apply while it waits, Undo once applied: one button, so the keyboard
    // focus stays where the teacher's next action is.
    let undo = move || step.with(undo_revision);
    let undone = move || step.with(|s| s.undone.is_some());
    let first = move || if pending() { Some(StepAction::Apply) } else { undo().map(|_| StepAction::Undo) };
    let busy = move || step.with(|s| s.busy);
    let run = move |action: Option<StepAction>| {
        if let Some(action) = action {
            act(action, step.with_untracked(|s| s.id.clone()), reply, lesson);
        }
    };
    view! {
        <div class="proposal" class:pending=pending>
            <p class="proposal-head">{head}</p>
            {move || view! { <ChangeList changes=step.with(|s| s.changes.clone()) label="Proposed changes"/> }}
            <div class="proposal-actions" hidden=move || first().is_none() && !undone()>
                // Undone, the button stays (the focus with it) and says so.
                <button
                    type="button"
                    class=move || if pending() { "primary" } else { "undo" }
                    aria-label=move || undo().filter(|_| !pending()).map(|n| format!("Undo version {n}"))
                    aria-disabled=move || (busy() || undone()).then_some("true")
                    on:click=move |_| run(first())
                >{move || if pending() { "Apply" } else if undone() { "Undone" } else { "Undo" }}</button>
                <button type="button" hidden=move || !pending() aria-disabled=move || busy().then_some("true") on:click=move |_| run(Some(StepAction::Preview))>"Preview"</button>
                <button type="button" hidden=move || !pending() aria-disabled=move || busy().then_some("true") on:click=move |_| run(Some(StepAction::Discard))>"Discard"</button>
            </div>
            <Outcome step/>
        </div>
    }
}

/// Inside a step, when opened: what a landed edit changed.
#[component]
pub fn StepChanges(step: StepView) -> impl IntoView {
    move || {
        step.with(|s| (s.proposal.is_none() && !s.changes.is_empty()).then(|| s.changes.clone()))
            .map(|changes| view! { <ChangeList changes label="Changes"/> })
    }
}

/// Beside a step: Undo for an edit that landed, and what came of it (a
/// proposal's card has its own).
#[component]
pub fn StepActions(step: StepView, reply: Reply) -> impl IntoView {
    let lesson = expect_context::<LessonState>();
    let own = move || step.with(|s| s.proposal.is_none());
    let undo = move || step.with(|s| if s.proposal.is_none() { undo_revision(s) } else { None });
    let undone = move || step.with(|s| s.proposal.is_none() && s.undone.is_some());
    view! {
        <button
            type="button"
            class="undo"
            hidden=move || undo().is_none() && !undone()
            aria-label=move || undo().map(|n| format!("Undo version {n}"))
            aria-disabled=move || (step.with(|s| s.busy) || undone()).then_some("true")
            on:click=move |_| if undo().is_some() { act(StepAction::Undo, step.with_untracked(|s| s.id.clone()), reply, lesson) }
        >{move || if undone() { "Undone" } else { "Undo" }}</button>
        <Show when=own><Outcome step/></Show>
    }
}

/// Runs the teacher's decision on step `id`: the call, then what came of it
/// shown on the step (the lesson changes with a write that landed).
pub fn act(action: StepAction, id: String, reply: Reply, lesson: LessonState) {
    let Some(step) = reply.steps.with_untracked(|s| s.iter().find(|x| x.id == id).cloned()) else { return };
    if step.busy {
        return;
    }
    // The teacher works in this group of steps: it stays open when the
    // reply goes on past it (as a paused reply does once they decide).
    reply.open_step(&id);
    let proposal = step.proposal.as_ref().map(|p| p.id.clone()).unwrap_or_default();
    let digest = step.proposal.as_ref().and_then(|p| p.digest.clone()).unwrap_or_default();
    let reason = if action == StepAction::Discard {
        // Cancelling the question keeps the proposal; an empty answer discards it without a reason.
        let Some(r) = ask("Discard this change? You can tell the assistant why (optional).", "") else { return };
        Some(r.trim().to_string()).filter(|r| !r.is_empty())
    } else {
        None
    };
    let settle = move |s: &mut Step, status: ProposalStatus, revision: Option<i64>, reason: Option<String>| {
        s.proposal = Some(ProposalMark::decided(s.proposal.take().map(|p| p.id).unwrap_or_default(), status, revision, reason));
        s.outcome = None;
        s.conflicts.clear();
    };
    reply.update_step(&id, |s| s.busy = true);
    spawn_local(async move {
        let result: Box<dyn FnOnce(&mut Step)> = match action {
            StepAction::Apply => match lesson_calls::apply_proposal(&proposal, digest).await.map(|r| landed(r, lesson)) {
                Ok(revision) => Box::new(move |s| settle(s, ProposalStatus::Applied, Some(revision), None)),
                Err(e) => shown_again(&proposal, refused(e.message(), e.conflicts().to_vec())).await,
            },
            StepAction::Preview => match lesson_calls::proposal_now(&proposal).await {
                Ok(now) => {
                    lesson.preview.set(Some(now.html.clone().unwrap_or_default()));
                    Box::new(move |s| as_shown(s, now))
                }
                Err(e) => refused(e, Vec::new()),
            },
            StepAction::Discard => match lesson_calls::discard_proposal(&proposal, reason.clone(), digest).await {
                Ok(()) => {
                    lesson.preview.set(None);
                    Box::new(move |s| settle(s, ProposalStatus::Discarded, None, reason))
                }
                Err(e) => shown_again(&proposal, refused(e.message(), Vec::new())).await,
            },
            StepAction::Undo => {
                let revision = undo_revision(&step).unwrap_or(0);
                match lesson_calls::undo(&lesson.id.get_value(), revision).await.map(|r| landed(r, lesson)) {
                    Ok(now) => Box::new(move |s| {
                        s.undone = Some(now);
                        s.outcome = Some((true, format!("Undone: the lesson is now version {now}.")));
                        s.conflicts.clear();
                    }),
                    Err(e) => refused(e.message(), e.conflicts().to_vec()),
                }
            }
        };
        reply.update_step(&id, |s| {
            s.busy = false;
            result(s);
        });
    });
}

/// Shows a write the teacher asked for (apply, undo) in the lesson; returns
/// its revision.
fn landed(r: SaveReply, lesson: LessonState) -> i64 {
    match r.outcome {
        SaveOutcome::Saved { revision, document_xml } => {
            lesson.apply_edit(revision, document_xml, r.html.unwrap_or_default(), &r.changes);
            revision
        }
        // The server answers these as errors; nothing to show.
        SaveOutcome::Conflict { current } => current,
        SaveOutcome::Invalid { .. } => lesson.revision.get_untracked(),
    }
}

/// A step's proposal as the server just showed it: its changes, and the
/// digest a decision on it names (none once it no longer waits).
fn as_shown(s: &mut Step, now: crate::models::ShownParts) {
    if let Some(p) = s.proposal.as_mut().filter(|p| p.status == ProposalStatus::Pending) {
        if now.digest.is_some() {
            s.changes = now.changes;
        }
        p.digest = now.digest;
    }
}

/// After a refused decision (shown too long ago, decided elsewhere, or in
/// the way of later changes): the proposal as it stands now, so that the
/// teacher's next decision is made on what they see.
async fn shown_again(proposal: &str, refusal: Box<dyn FnOnce(&mut Step)>) -> Box<dyn FnOnce(&mut Step)> {
    let now = lesson_calls::proposal_now(proposal).await.ok();
    Box::new(move |s| {
        if let Some(now) = now {
            as_shown(s, now);
        }
        refusal(s);
    })
}

fn refused(message: String, conflicts: Vec<Change>) -> Box<dyn FnOnce(&mut Step)> {
    Box::new(move |s| {
        s.outcome = Some((false, message));
        s.conflicts = conflicts;
    })
}
