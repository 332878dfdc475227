//! The lesson's XML source with Save. An invalid document is not saved: every
//! problem is listed with its line (click one to jump there) and the text the
//! teacher typed stays exactly as it was.

use leptos::{html, prelude::*, task::spawn_local};

use crate::components::client_view::{ClientView, IntoClientView};
use super::{lesson_calls, lesson_state::LessonState};
use crate::{
    lesson::LessonError,
    models::{SaveOutcome, SaveReply},
};

#[derive(Clone, Debug, PartialEq)]
enum Status {
    Idle,
    Saved(i64),
    Invalid(Vec<LessonError>),
    Conflict(i64),
    Failed(String),
}

#[component]
pub fn XmlEditor() -> impl IntoView {
    let state = expect_context::<LessonState>();
    let text = Signal::derive(move || state.draft.get().unwrap_or_else(|| state.xml.get()));
    let status = RwSignal::new(Status::Idle);
    let area = NodeRef::<html::Textarea>::new();

    let saving = RwSignal::new(false);
    let on_save = move |_| {
        if saving.get_untracked() {
            return;
        }
        status.set(Status::Idle);
        saving.set(true);
        let (xml, base) = (text.get_untracked(), state.save_base());
        spawn_local(async move {
            let result = lesson_calls::save(&state.id.get_value(), xml, base).await;
            saving.set(false);
            status.set(match result {
                Ok(SaveReply { outcome: SaveOutcome::Saved { revision, document_xml }, html, .. }) => {
                    state.draft.set(None);
                    state.apply_revision(revision, document_xml, html.unwrap_or_default());
                    Status::Saved(revision)
                }
                Ok(SaveReply { outcome: SaveOutcome::Invalid { errors }, .. }) => Status::Invalid(errors),
                Ok(SaveReply { outcome: SaveOutcome::Conflict { current }, .. }) => Status::Conflict(current),
                Err(message) => Status::Failed(message),
            });
        });
    };
    let go_to_line = move |line: u32| {
        let Some(el) = area.get() else { return };
        let value = el.value();
        let start: usize = value.split('\n').take(line.saturating_sub(1) as usize).map(|l| l.encode_utf16().count() + 1).sum();
        let len = value.split('\n').nth(line.saturating_sub(1) as usize).map(|l| l.encode_utf16().count()).unwrap_or(0);
        let _ = el.focus();
        let _ = el.set_selection_range(start as u32, (start + len) as u32);
    };

    view! {
        <div class="xml-editor">
            <label for="lesson-xml" class="sr-only">"Lesson XML"</label>
            <textarea
                id="lesson-xml"
                node_ref=area
                spellcheck="false"
                prop:value=text
                on:input=move |ev| state.edit_draft(event_target_value(&ev))
            >{text.get_untracked()}</textarea>
            <div class="editor-actions">
                <button type="button" class="primary" on:click=on_save disabled=move || saving.get()>"Save"</button>
                <span class="muted">"Version " {move || state.revision.get()}</span>
                // A version saved meanwhile (in another tab, elsewhere, or by the
                // assistant) never replaces the text being typed: it is offered.
                <Show when=move || state.draft.with(Option::is_some)>
                    <span class="muted">" · unsaved changes"</span>
                    <Show when=move || { state.revision.get() > state.draft_base.get() }>
                        <span class="form-error">" · a newer version was saved "</span>
                        <button type="button" class="quiet" on:click=move |_| state.draft.set(None)>"Load it (drops your changes)"</button>
                    </Show>
                </Show>
            </div>
            <div class="xml-status">{move || status.with(|s| status_view(s, go_to_line))}</div>
        </div>
    }
}

/// What came of the last save; a problem's "Line N" goes to its line.
fn status_view(status: &Status, go_to_line: impl Fn(u32) + Copy + Send + Sync + 'static) -> Option<ClientView> {
    Some(match status {
        Status::Idle => return None,
        Status::Saved(n) => view! { <p class="form-ok" role="status">"Saved as version "{*n}"."</p> }.into_client_view(),
        Status::Conflict(n) => view! {
            <p class="form-error" role="alert">
                "Not saved: this lesson changed since you opened it (it is now version "{*n}"). "
                "Your text is still here. Copy what you need, then reload the page to see the latest version."
            </p>
        }
        .into_client_view(),
        Status::Failed(msg) => view! { <p class="form-error" role="alert">"Not saved: "{msg.clone()}</p> }.into_client_view(),
        Status::Invalid(errors) => {
            let what = if errors.len() == 1 { "this problem".to_string() } else { format!("these {} problems", errors.len()) };
            let items = errors
                .iter()
                .map(|e| {
                    let line = e.line;
                    let label = if line > 0 { format!("Line {line}") } else { "Document".to_string() };
                    let detail = if e.path.is_empty() { e.message.clone() } else { format!("{}: {}", e.path, e.message) };
                    view! { <li><button type="button" class="line-link" on:click=move |_| go_to_line(line)>{label}</button>" "{detail}</li> }
                })
                .collect_view();
            view! { <div class="xml-errors" role="alert"><p>"Not saved. Fix "{what}":"</p><ul>{items}</ul></div> }.into_client_view()
        }
    })
}
