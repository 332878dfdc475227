//! What the teacher sees and does about an edit of the assistant's: the
//! change list in the lesson's own terms, Apply, Preview and Discard for an
//! edit held for review, and Undo for one that landed. The lists arrive
//! worded by the server; nothing here compares documents.

use leptos::{either::Either, prelude::*, task::spawn_local};

use super::state::{Reply, Step};
use crate::{
    chat::{
        client::ask,
        proposal::{ProposalMark, ProposalStatus},
    },
    components::{lesson_calls, lesson_state::LessonState},
    lesson::{Change, ChangeKind},
};

/// The changes, one line each, marked by kind.
#[component]
pub fn ChangeList(changes: Vec<Change>, #[prop(optional)] label: &'static str) -> impl IntoView {
    let label = if label.is_empty() { "Changes" } else { label };
    view! {
        <ul class="changes" aria-label=label>
            {changes.into_iter().map(|c| {
                let kind = match c.kind {
                    ChangeKind::Added => "added",
                    ChangeKind::Removed => "removed",
                    ChangeKind::Edited => "edited",
                    ChangeKind::Moved => "moved",
                };
                view! { <li class=kind>{c.text}</li> }
            }).collect_view()}
        </ul>
    }
}

/// The edits of a reply held for review, under its text: they stay in view
/// (the steps fold away once the reply ends) until the teacher decides.
#[component]
pub fn ProposalCards(reply: Reply) -> impl IntoView {
    move || {
        reply
            .steps
            .get()
            .into_iter()
            .filter_map(|step| step.proposal.clone().map(|mark| view! { <ProposalCard reply step mark/> }))
            .collect_view()
    }
}

/// An edit waiting for the teacher (Apply, Preview, Discard), or what they
/// decided about it.
#[component]
pub fn ProposalCard(reply: Reply, step: Step, mark: ProposalMark) -> impl IntoView {
    let lesson = expect_context::<LessonState>();
    let busy = RwSignal::new(false);
    let step_id = StoredValue::new(step.id.clone());
    let proposal_id = StoredValue::new(mark.id.clone());
    let settle = move |status: ProposalStatus, revision: Option<i64>, reason: Option<String>| {
        reply.update_step(&step_id.get_value(), |s| {
            s.proposal = Some(ProposalMark { id: proposal_id.get_value(), status, revision, reason });
            s.outcome = None;
            s.conflicts.clear();
        });
    };
    let refuse = move |message: String, conflicts: Vec<Change>| {
        reply.update_step(&step_id.get_value(), |s| {
            s.outcome = Some((false, message));
            s.conflicts = conflicts;
        });
    };
    let apply = move |_| {
        busy.set(true);
        spawn_local(async move {
            match lesson_calls::apply_proposal(&proposal_id.get_value()).await {
                Ok(r) => {
                    lesson.apply_edit(r.revision, r.document_xml, r.html, &r.changes);
                    settle(ProposalStatus::Applied, Some(r.revision), None);
                }
                Err(e) => refuse(e.message(), e.conflicts().to_vec()),
            }
            busy.set(false);
        });
    };
    let preview = move |_| {
        busy.set(true);
        spawn_local(async move {
            match lesson_calls::proposal(&proposal_id.get_value()).await {
                Ok(p) => lesson.preview.set(Some(p.html)),
                Err(e) => refuse(e, Vec::new()),
            }
            busy.set(false);
        });
    };
    let discard = move |_| {
        // Cancelling the question keeps the proposal; an empty answer discards it without a reason.
        let Some(reason) = ask("Discard this change? You can tell the assistant why (optional).", "") else { return };
        let reason = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
        busy.set(true);
        spawn_local(async move {
            match lesson_calls::discard_proposal(&proposal_id.get_value(), reason.clone()).await {
                Ok(()) => {
                    lesson.preview.set(None);
                    settle(ProposalStatus::Discarded, None, reason);
                }
                Err(e) => refuse(e, Vec::new()),
            }
            busy.set(false);
        });
    };
    let decided = match (mark.status, mark.revision, mark.reason.as_deref()) {
        (ProposalStatus::Pending, ..) => None,
        (ProposalStatus::Applied, Some(n), _) => Some(format!("Applied as version {n}.")),
        (ProposalStatus::Applied, None, _) => Some("Applied.".to_string()),
        (ProposalStatus::Discarded, _, Some(r)) => Some(format!("Discarded: “{r}”")),
        (ProposalStatus::Discarded, _, None) => Some("Discarded.".to_string()),
        (ProposalStatus::Replaced, ..) => Some("Replaced by a newer suggestion.".to_string()),
    };
    let applied = mark.status == ProposalStatus::Applied;
    let pending = decided.is_none();
    view! {
        <div class="proposal" class:pending=pending>
            {match decided {
                None => Either::Left(view! {
                    <p class="proposal-head">"Waiting for your review: nothing has changed yet."</p>
                    <ChangeList changes=step.changes.clone() label="Proposed changes"/>
                    <div class="proposal-actions">
                        <button type="button" class="primary" disabled=move || busy.get() on:click=apply>"Apply"</button>
                        <button type="button" disabled=move || busy.get() on:click=preview>"Preview"</button>
                        <button type="button" disabled=move || busy.get() on:click=discard>"Discard"</button>
                    </div>
                }),
                Some(text) => Either::Right(view! {
                    <p class="proposal-head">{text}</p>
                    <ChangeList changes=step.changes.clone() label="Proposed changes"/>
                    {applied.then(|| mark.revision.map(|n| view! { <UndoButton reply step_id=step.id.clone() revision=n/> }))}
                }),
            }}
            <StepOutcome step=step.clone()/>
        </div>
    }
}

/// Takes back one edit that landed (as a new version).
#[component]
pub fn UndoButton(reply: Reply, step_id: String, revision: i64) -> impl IntoView {
    let lesson = expect_context::<LessonState>();
    let busy = RwSignal::new(false);
    let step_id = StoredValue::new(step_id);
    let undo = move |_| {
        busy.set(true);
        spawn_local(async move {
            let result = lesson_calls::undo(&lesson.id.get_value(), revision).await;
            reply.update_step(&step_id.get_value(), |s| match result {
                Ok(r) => {
                    s.outcome = Some((true, format!("Undone: the lesson is now version {}.", r.revision)));
                    s.conflicts.clear();
                    lesson.apply_edit(r.revision, r.document_xml, r.html, &r.changes);
                }
                Err(e) => {
                    s.outcome = Some((false, e.message()));
                    s.conflicts = e.conflicts().to_vec();
                }
            });
            busy.set(false);
        });
    };
    view! {
        <button type="button" class="undo" disabled=move || busy.get() on:click=undo
            aria-label=format!("Undo version {revision}")>"Undo"</button>
    }
}

/// What came of the teacher's last action on a step, with the changes it
/// collided with.
#[component]
pub fn StepOutcome(step: Step) -> impl IntoView {
    step.outcome.clone().map(|(ok, text)| {
        view! {
            <div class=if ok { "form-ok" } else { "form-error" } role=if ok { "status" } else { "alert" }>
                <p>{text}</p>
                {(!step.conflicts.is_empty()).then(|| view! { <ChangeList changes=step.conflicts.clone() label="Changes that collide"/> })}
            </div>
        }
    })
}
