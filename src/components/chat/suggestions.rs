//! What a reply offers to do next, shown under the chat's last reply only
//! (so it is gone once the teacher sends anything): follow-ups that one
//! click sends (`data-action="say"`) and the page's own actions
//! (`data-action="page"`), which run here without asking the model. The
//! actions are the shared registry's (`chat::actions`); this is where each
//! one's handler lives. Drawn as HTML, like the steps, and clicked through
//! the reply's one handler (`review::act`).

use leptos::prelude::*;

use super::state::{Reply, Step, StepStatus};
use crate::{
    chat::actions::PageAction,
    components::lesson_state::LessonState,
    lesson::{escape_attr, escape_text},
};

/// The buttons, or nothing when the reply offers none. `off`: a reply is
/// under way or nothing can be asked now.
pub fn html(reply: Reply, off: bool) -> String {
    let disabled = if off { " disabled" } else { "" };
    let undoable = reply.steps.with(|s| last_edit(s).is_some());
    reply.suggested.with(|(replies, actions)| {
        let mut out = String::new();
        for r in replies {
            out.push_str(&format!(
                "<button type=\"button\" class=\"chip\" data-action=\"say\" data-text=\"{}\"{disabled}>{}</button>",
                escape_attr(r),
                escape_text(r)
            ));
        }
        let offered = actions.iter().filter_map(|a| PageAction::from_wire(a));
        for a in offered.filter(|a| *a != PageAction::UndoEdit || undoable) {
            out.push_str(&format!(
                "<button type=\"button\" class=\"chip action\" data-action=\"page\" data-name=\"{}\">{}</button>",
                a.as_str(),
                a.label()
            ));
        }
        if out.is_empty() {
            out
        } else {
            format!("<div class=\"suggestions\">{out}</div>")
        }
    })
}

/// The edit of this reply that Undo takes back: its last one that landed.
fn last_edit(steps: &[Step]) -> Option<&Step> {
    steps.iter().rev().find(|s| s.status == StepStatus::Success && s.revision.is_some())
}

/// Runs the action named `name`. Undo is the edit's own: the id of the step
/// to undo is handed back for the reply's handler to run it as its Undo
/// button would (the steps open, so its outcome shows).
pub fn run(name: Option<String>, reply: Reply, lesson: LessonState) -> Option<String> {
    match PageAction::from_wire(name.as_deref()?)? {
        PageAction::StudentPreview => {
            lesson.preview.set(None);
            lesson.student.set(true);
            None
        }
        PageAction::UndoEdit => {
            reply.expanded.set(true);
            reply.steps.with_untracked(|s| last_edit(s).map(|s| s.id.clone()))
        }
        a @ (PageAction::PrintWorksheet | PageAction::PrintKey) => {
            let key = if a == PageAction::PrintKey { "?key=1" } else { "" };
            let url = format!("/lessons/{}/print{key}", lesson.id.get_value());
            if let Some(w) = leptos::web_sys::window() {
                let _ = w.open_with_url_and_target(&url, "_blank");
            }
            None
        }
    }
}
