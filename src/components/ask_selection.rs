//! "Ask about this": text selected in the lesson offers a button beside it;
//! pressing it puts the selection, with the id of the block it is in, in the
//! chat's message box (as a quote the teacher can remove), to go with the
//! next message (`attachments.selectedText`).
//!
//! Written against the DOM rather than as a view: one listener on the page
//! for mouse, keyboard and the button, and one button made, placed and
//! hidden by hand. As a view (around the lesson, with a signal for the
//! selection) it cost the bundle several times as much.

use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use crate::chat::message::SelectedText;

/// Starts offering the button on the lesson page (in the browser only);
/// the choice goes to `asking`, packed (`SelectedText::packed`).
pub fn offer(asking: RwSignal<Option<String>>) {
    #[cfg(feature = "hydrate")]
    listen(asking);
    #[cfg(not(feature = "hydrate"))]
    let _ = asking;
}

#[cfg(feature = "hydrate")]
fn listen(asking: RwSignal<Option<String>>) {
    use std::cell::RefCell;

    use leptos::{
        wasm_bindgen::{closure::Closure, JsCast},
        web_sys::{Event, HtmlElement},
    };
    let doc = document();
    // The button is in the page as the server drew it (`lesson_page`,
    // outside the island: the browser has no view code for it).
    let Some(button) = doc.query_selector(".ask-selection").ok().flatten().and_then(|b| b.dyn_into::<HtmlElement>().ok()) else { return };
    // The selection the button offers while it shows.
    let offered = RefCell::new(None::<SelectedText>);
    let on_event = Closure::<dyn Fn(Event)>::new(move |ev: Event| {
        let on_button = ev.target().and_then(|t| t.dyn_into::<leptos::web_sys::Node>().ok()).is_some_and(|t| button.is_same_node(Some(&t)));
        if ev.type_() == "click" {
            if on_button {
                asking.set(offered.borrow_mut().take().map(|s| s.packed()));
                button.set_hidden(true);
                if let Some(el) = document().query_selector(".chat-input textarea").ok().flatten().and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
                    let _ = el.focus();
                }
            }
            return;
        }
        if on_button {
            return;
        }
        let found = selection();
        if let Some((_, top, left)) = &found {
            let _ = button.set_attribute("style", &format!("top:{top}px;left:{left}px"));
        }
        button.set_hidden(found.is_none());
        *offered.borrow_mut() = found.map(|f| f.0);
    });
    for name in ["mouseup", "keyup", "click"] {
        let _ = doc.add_event_listener_with_callback(name, on_event.as_ref().unchecked_ref());
    }
    // The page keeps it for its lifetime.
    on_event.forget();
}

/// What is selected inside the lesson now, if anything: its text (cut to
/// what a message may carry), its block's id and where it is on screen, in
/// whole pixels.
#[cfg(feature = "hydrate")]
fn selection() -> Option<(SelectedText, i32, i32)> {
    use leptos::wasm_bindgen::JsCast;
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
    el.closest(".document-pane > .lesson-view, .editor-host > .lesson-view").ok()??;
    let block_id = el.closest("[data-id]").ok().flatten().and_then(|b| b.get_attribute("data-id")).unwrap_or_default();
    let rect = range.get_bounding_client_rect();
    let text = text.chars().take(crate::chat::message::MAX_SELECTION_CHARS).collect();
    // Below the selection, or above it when that would leave the window.
    let room = window().inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(f64::MAX);
    let top = if rect.bottom() + 40.0 > room { (rect.top() - 36.0).max(0.0) } else { rect.bottom() + 4.0 };
    Some((SelectedText { text, block_id }, top as i32, rect.left() as i32))
}
