//! What the teacher sees and does about an edit of the assistant's: the
//! change list in the lesson's own terms, Apply, Preview and Discard for an
//! edit held for review, and Undo for one that landed. The lists arrive
//! worded by the server; nothing here compares documents.
//!
//! Written as HTML strings (every piece of text escaped) with one click
//! handler per reply that reads `data-action` off the button, instead of a
//! typed view per card and per button: each typed view compiles to its own
//! code in the browser bundle, and these parts have no state of their own
//! (they are redrawn from the reply's steps).

use leptos::{ev, prelude::*, task::spawn_local, wasm_bindgen::JsCast, web_sys};

use super::{
    controller::Chat,
    state::{Reply, Step, StepStatus},
    suggestions,
};
use crate::{
    chat::{
        client::ask,
        proposal::{ProposalMark, ProposalStatus},
    },
    components::{lesson_calls, lesson_state::LessonState},
    lesson::{escape_attr, escape_text, Change, ChangeKind},
    models::{SaveOutcome, SaveReply},
};

/// The changes as a list, one line each, marked by kind.
pub fn change_list(changes: &[Change], label: &str) -> String {
    let mut out = format!("<ul class=\"changes\" aria-label=\"{label}\">");
    for c in changes {
        let kind = match c.kind {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Edited => "edited",
            ChangeKind::Moved => "moved",
        };
        out.push_str(&format!("<li class=\"{kind}\">{}</li>", escape_text(&c.text)));
    }
    out.push_str("</ul>");
    out
}

fn button(action: &str, step: &Step, text: &str, extra: &str) -> String {
    let disabled = if step.busy { " disabled" } else { "" };
    format!("<button type=\"button\" data-action=\"{action}\" data-step=\"{}\"{extra}{disabled}>{text}</button>", escape_attr(&step.id))
}

fn undo_button(step: &Step, revision: i64) -> String {
    button("undo", step, "Undo", &format!(" class=\"undo\" aria-label=\"Undo version {revision}\""))
}

/// What came of the teacher's last action on a step, with the changes it
/// collided with.
fn outcome(step: &Step) -> String {
    let Some((ok, text)) = &step.outcome else { return String::new() };
    let (class, role) = if *ok { ("form-ok", "status") } else { ("form-error", "alert") };
    let conflicts = if step.conflicts.is_empty() { String::new() } else { change_list(&step.conflicts, "Changes that collide") };
    format!("<div class=\"{class}\" role=\"{role}\"><p>{}</p>{conflicts}</div>", escape_text(text))
}

/// The edits of a reply held for review, shown under its text: they stay in
/// view (the steps fold away once the reply ends) until the teacher decides.
pub fn proposals(steps: &[Step]) -> String {
    steps.iter().filter_map(|s| s.proposal.as_ref().map(|mark| proposal(s, mark))).collect()
}

fn proposal(step: &Step, mark: &ProposalMark) -> String {
    let head = match (mark.status, mark.revision, mark.reason.as_deref()) {
        (ProposalStatus::Pending, ..) => "Waiting for your review: nothing has changed yet.".to_string(),
        (ProposalStatus::Applied, Some(n), _) => format!("Applied as version {n}."),
        (ProposalStatus::Applied, None, _) => "Applied.".to_string(),
        (ProposalStatus::Discarded, _, Some(r)) => format!("Discarded: “{r}”"),
        (ProposalStatus::Discarded, _, None) => "Discarded.".to_string(),
        (ProposalStatus::Replaced, ..) => "Replaced by a newer suggestion.".to_string(),
    };
    let actions = match (mark.status, mark.revision) {
        (ProposalStatus::Pending, _) => format!(
            "<div class=\"proposal-actions\">{}{}{}</div>",
            button("apply", step, "Apply", " class=\"primary\""),
            button("preview", step, "Preview", ""),
            button("discard", step, "Discard", "")
        ),
        (ProposalStatus::Applied, Some(n)) => undo_button(step, n),
        _ => String::new(),
    };
    let pending = if mark.status == ProposalStatus::Pending { " pending" } else { "" };
    format!(
        "<div class=\"proposal{pending}\"><p class=\"proposal-head\">{}</p>{}{actions}{}</div>",
        escape_text(&head),
        change_list(&step.changes, "Proposed changes"),
        outcome(step)
    )
}

/// Inside a step, when opened: what a landed edit changed.
pub fn step_changes(step: &Step) -> String {
    if step.proposal.is_some() || step.changes.is_empty() {
        return String::new();
    }
    change_list(&step.changes, "Changes")
}

/// Beside a step: Undo for an edit that landed, and what came of it.
pub fn step_actions(step: &Step) -> String {
    if step.proposal.is_some() {
        return String::new(); // its card has them
    }
    let undo = match (&step.status, step.revision) {
        (StepStatus::Success, Some(n)) => undo_button(step, n),
        _ => String::new(),
    };
    undo + &outcome(step)
}

/// The one click handler of a reply: runs the action of the button clicked
/// (Apply, Preview, Discard, Undo, Retry, a suggested reply or action, the
/// thinking's and the steps' toggles), if any. The card is drawn anew
/// when the step changes; the keyboard focus goes back to the button that
/// was pressed, or, if it is gone, to Undo when there is one.
pub fn act(ev: &ev::MouseEvent, reply: Reply, lesson: LessonState, chat: Chat) {
    let target: web_sys::Element = event_target(ev);
    let Ok(Some(button)) = target.closest("button[data-action]") else { return };
    let Some(action) = button.get_attribute("data-action") else { return };
    match action.as_str() {
        "retry" if !chat.turn.busy.get_untracked() => {
            // The chat's last reply is run again in its place; an older one
            // can only be asked again as a new message.
            let last = chat.conversation.messages.with_untracked(|m| m.last().and_then(|x| x.reply).is_some_and(|r| r.phase == reply.phase));
            return if last { chat.retry(reply.asked.get_value()) } else { chat.send(reply.asked.get_value()) };
        }
        "retry" => return,
        _ => {}
    }
    let (action, id) = match action.as_str() {
        // Open or close the thinking or the steps; the button is drawn
        // again, so the keyboard focus goes back to it.
        "thinking" | "steps" => {
            let open = if action == "steps" { reply.expanded } else { reply.thinking_open };
            open.update(|o| *o = !*o);
            if let Ok(Some(msg)) = button.closest(".msg") {
                let query = format!("button[data-action=\"{action}\"]");
                request_animation_frame(move || {
                    if let Ok(Some(el)) = msg.query_selector(&query) {
                        let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
                    }
                });
            }
            return;
        }
        "say" => {
            if let Some(text) = button.get_attribute("data-text") {
                chat.send(text);
            }
            return;
        }
        "page" => match suggestions::run(button.get_attribute("data-name"), reply, lesson) {
            // Undo this edit: as its own Undo button does.
            Some(step) => ("undo".to_string(), step),
            None => return,
        },
        _ => match button.get_attribute("data-step") {
            Some(id) => (action, id),
            None => return,
        },
    };
    let Some(step) = reply.steps.with_untracked(|s| s.iter().find(|x| x.id == id).cloned()) else { return };
    if step.busy {
        return;
    }
    let proposal = step.proposal.as_ref().map(|p| p.id.clone()).unwrap_or_default();
    let reason = if action == "discard" {
        // Cancelling the question keeps the proposal; an empty answer discards it without a reason.
        let Some(r) = ask("Discard this change? You can tell the assistant why (optional).", "") else { return };
        Some(r.trim().to_string()).filter(|r| !r.is_empty())
    } else {
        None
    };
    let settle = move |s: &mut Step, status: ProposalStatus, revision: Option<i64>, reason: Option<String>| {
        s.proposal = Some(ProposalMark { id: s.proposal.take().map(|p| p.id).unwrap_or_default(), status, revision, reason });
        s.outcome = None;
        s.conflicts.clear();
    };
    reply.update_step(&id, |s| s.busy = true);
    spawn_local(async move {
        let result: Box<dyn FnOnce(&mut Step)> = match action.as_str() {
            "apply" => match lesson_calls::apply_proposal(&proposal).await.map(|r| landed(r, lesson)) {
                Ok(revision) => Box::new(move |s| settle(s, ProposalStatus::Applied, Some(revision), None)),
                Err(e) => refused(e.message(), e.conflicts().to_vec()),
            },
            "preview" => match lesson_calls::proposal_html(&proposal).await {
                Ok(html) => {
                    lesson.preview.set(Some(html));
                    Box::new(|_| {})
                }
                Err(e) => refused(e, Vec::new()),
            },
            "discard" => match lesson_calls::discard_proposal(&proposal, reason.clone()).await {
                Ok(()) => {
                    lesson.preview.set(None);
                    Box::new(move |s| settle(s, ProposalStatus::Discarded, None, reason))
                }
                Err(e) => refused(e, Vec::new()),
            },
            "undo" => {
                let revision = step.revision.or(step.proposal.and_then(|p| p.revision)).unwrap_or(0);
                match lesson_calls::undo(&lesson.id.get_value(), revision).await.map(|r| landed(r, lesson)) {
                    Ok(now) => Box::new(move |s| {
                        s.outcome = Some((true, format!("Undone: the lesson is now version {now}.")));
                        s.conflicts.clear();
                    }),
                    Err(e) => refused(e.message(), e.conflicts().to_vec()),
                }
            }
            _ => Box::new(|_| {}),
        };
        reply.update_step(&id, |s| {
            s.busy = false;
            result(s);
        });
        refocus(&action, &id);
    });
}

/// Puts the keyboard focus back on a button of a step once it is drawn
/// again: the same action, else its Undo.
fn refocus(action: &str, step: &str) {
    let step = escape_attr(step);
    let same = format!("button[data-action=\"{action}\"][data-step=\"{step}\"]");
    let undo = format!("button[data-action=\"undo\"][data-step=\"{step}\"]");
    request_animation_frame(move || {
        let found = [same, undo].into_iter().find_map(|q| document().query_selector(&q).ok().flatten());
        if let Some(el) = found {
            let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
        }
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

fn refused(message: String, conflicts: Vec<Change>) -> Box<dyn FnOnce(&mut Step)> {
    Box::new(move |s| {
        s.outcome = Some((false, message));
        s.conflicts = conflicts;
    })
}
