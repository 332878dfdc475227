//! What a reply offers to do next, shown under the chat's last reply only
//! (so it is gone once the teacher sends anything): follow-ups that one
//! click sends and the page's own actions, which run here without asking
//! the model. The actions are the shared registry's (`chat::actions`); this
//! is where each one's handler lives.

use leptos::prelude::*;

use super::{
    controller::Chat,
    review::{act, StepAction},
    state::{Reply, Step, StepStatus},
};
use crate::{chat::actions::PageAction, components::lesson_state::LessonState};

/// The buttons, or nothing when the reply offers none. `off`: a reply is
/// under way or nothing can be asked now.
#[component]
pub fn Suggestions(reply: Reply, off: Signal<bool>) -> impl IntoView {
    let chat = expect_context::<Chat>();
    let lesson = expect_context::<LessonState>();
    let undoable = move || reply.steps.with(|s| last_edit(s).is_some());
    let replies = move || reply.suggested.with(|(r, _)| r.clone());
    let actions = move || {
        let undoable = undoable();
        reply.suggested.with(|(_, a)| {
            a.iter().filter_map(|a| PageAction::from_wire(a)).filter(|a| *a != PageAction::UndoEdit || undoable).collect::<Vec<_>>()
        })
    };
    move || {
        let (replies, actions) = (replies(), actions());
        (!replies.is_empty() || !actions.is_empty()).then(|| {
            let said = replies
                .into_iter()
                .map(|text| {
                    let sent = text.clone();
                    view! { <button type="button" class="chip" disabled=off on:click=move |_| chat.send(sent.clone())>{text}</button> }
                })
                .collect_view();
            let done = actions
                .into_iter()
                .map(|a| view! { <button type="button" class="chip action" disabled=off on:click=move |_| run(a, reply, lesson)>{a.label()}</button> })
                .collect_view();
            view! { <div class="suggestions">{said}{done}</div> }
        })
    }
}

/// The edit of this reply that Undo takes back: its last one that landed.
fn last_edit(steps: &[Step]) -> Option<&Step> {
    steps.iter().rev().find(|s| s.status == StepStatus::Success && s.revision.is_some())
}

/// Runs a page action. Undo is the edit's own: run as its Undo button
/// would, with the steps open so its outcome shows.
fn run(action: PageAction, reply: Reply, lesson: LessonState) {
    match action {
        PageAction::StudentPreview => {
            lesson.preview.set(None);
            lesson.student.set(true);
        }
        PageAction::UndoEdit => {
            if let Some(id) = reply.steps.with_untracked(|s| last_edit(s).map(|s| s.id.clone())) {
                reply.open_step(&id);
                act(StepAction::Undo, id, reply, lesson);
            }
        }
        a @ (PageAction::PrintWorksheet | PageAction::PrintKey) => {
            let key = if a == PageAction::PrintKey { "?key=1" } else { "" };
            let url = format!("/lessons/{}/print{key}", lesson.id.get_value());
            if let Some(w) = leptos::web_sys::window() {
                let _ = w.open_with_url_and_target(&url, "_blank");
            }
        }
    }
}
