//! A reply's steps drawn as HTML (every piece of text escaped): listed live
//! while the reply is written, then folded into "Done (N steps)", whose
//! button (`data-action="steps"`) the reply's one click handler
//! (`review::act`) opens and closes. A string per reply instead of a typed
//! view per step: the steps have no state of their own, and typed views
//! cost the browser bundle several times as much code.

use super::{
    review::{step_actions, step_changes},
    state::{Step, StepStatus},
};
use crate::lesson::escape_text;

/// The list of a reply's steps.
pub fn list(steps: &[Step]) -> String {
    let items: String = steps.iter().map(item).collect();
    format!("<ul class=\"steps\">{items}</ul>")
}

fn item(step: &Step) -> String {
    let (icon, class, said) = match &step.status {
        StepStatus::Running => ("", "running", "in progress"),
        StepStatus::Success => ("✓", "ok", "done"),
        StepStatus::Failed(_) => ("✗", "failed", "failed"),
        StepStatus::Proposed => ("?", "proposed", "waiting for your review"),
    };
    let mark = if class == "running" {
        "<span class=\"spinner\" aria-hidden=\"true\"></span>".to_string()
    } else {
        format!("<span class=\"mark\" aria-hidden=\"true\">{icon}</span>")
    };
    let mut detail = String::new();
    if !step.detail.is_empty() {
        detail.push_str(&format!("<p>{}</p>", escape_text(&step.detail)));
    }
    // A proposal is shown under the reply, where it stays in view while it
    // waits (`review::proposals`); an edit that landed lists its changes here.
    detail.push_str(&step_changes(step));
    if let StepStatus::Failed(e) = &step.status {
        detail.push_str(&format!("<pre class=\"step-error\">{}</pre>", escape_text(e)));
    }
    // What went in and what came out, as sent, for whoever wants to see exactly.
    detail.push_str(&format!("<details class=\"raw\"><summary>Details</summary><p>Input</p><pre>{}</pre>", escape_text(&step.input)));
    if !step.output.is_empty() {
        detail.push_str(&format!("<p>Output</p><pre>{}</pre>", escape_text(&step.output)));
    }
    detail.push_str("</details>");
    // A call under way that says how far it has come.
    let progress = match (&step.status, &step.progress) {
        (StepStatus::Running, Some((message, fraction))) => format!(
            "<p class=\"step-progress\">{}{}</p>",
            escape_text(message),
            // In whole percent: formatting a float would bring its code into the bundle.
            fraction.map(|f| format!(" <progress max=\"100\" value=\"{}\"></progress>", (f * 100.0) as u32)).unwrap_or_default()
        ),
        _ => String::new(),
    };
    format!(
        "<li class=\"step {class}\"><details><summary>{mark} <span class=\"step-label\">{}</span><span class=\"sr-only\"> ({said})</span></summary><div class=\"step-detail\">{detail}</div></details>{progress}{}</li>",
        escape_text(&step.label),
        step_actions(step)
    )
}
