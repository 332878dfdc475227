//! "Ask about this": text selected in the lesson offers a button beside it;
//! pressing it puts the selection, with the id of the block it is in, in the
//! chat's message box (as a quote the teacher can remove), to go with the
//! next message (`attachments.selectedText`).

use leptos::prelude::*;
#[cfg(feature = "hydrate")]
use leptos::wasm_bindgen::JsCast;

use super::lesson_state::LessonState;
use crate::chat::message::SelectedText;

/// The lesson view, and the button while something in it is selected.
#[component]
pub fn AskAboutSelection(children: Children) -> impl IntoView {
    let state = expect_context::<LessonState>();
    // The selection offered, and where the button goes (below its end).
    let offered = RwSignal::new(None::<(SelectedText, f64, f64)>);
    view! {
        <div class="selectable" on:mouseup=move |_| offered.set(selection()) on:keyup=move |_| offered.set(selection())>
            {children()}
            {move || offered.get().map(|(sel, top, left)| view! {
                <button type="button" class="ask-selection" style=format!("top:{top}px;left:{left}px")
                    on:click=move |_| {
                        state.asking.set(Some(sel.clone()));
                        offered.set(None);
                        focus_message_box();
                    }>"Ask about this"</button>
            })}
        </div>
    }
}

/// The chat's message box takes the keyboard, to write the question.
fn focus_message_box() {
    #[cfg(feature = "hydrate")]
    if let Some(el) = document().query_selector(".chat-input textarea").ok().flatten().and_then(|e| e.dyn_into::<leptos::web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}

/// What is selected inside the lesson now, if anything: its text (cut to
/// what a message may carry), its block's id and where its end is on screen.
#[cfg(not(feature = "hydrate"))]
fn selection() -> Option<(SelectedText, f64, f64)> {
    None
}

#[cfg(feature = "hydrate")]
fn selection() -> Option<(SelectedText, f64, f64)> {
    let sel = window().get_selection().ok()??;
    let text: String = sel.to_string().into();
    let text = text.trim();
    if text.is_empty() || sel.range_count() == 0 {
        return None;
    }
    let range = sel.get_range_at(0).ok()?;
    let node = range.common_ancestor_container().ok()?;
    let el = match node.dyn_ref::<leptos::web_sys::Element>() {
        Some(el) => el.clone(),
        None => node.parent_element()?,
    };
    el.closest(".lesson-view").ok()??;
    let block_id = el.closest("[data-id]").ok().flatten().and_then(|b| b.get_attribute("data-id")).unwrap_or_default();
    let rect = range.get_bounding_client_rect();
    let text = text.chars().take(crate::chat::message::MAX_SELECTION_CHARS).collect();
    Some((SelectedText { text, block_id }, rect.bottom() + 4.0, rect.left()))
}
