//! Parts of an island that only appear after the teacher does something
//! (the XML editor, the history): they are built in the browser when first
//! needed and never rendered on the server.
//!
//! Why: a view that can come from the server must also be able to hydrate,
//! and hydration code is compiled for every branch of it, used or not. The
//! lesson workspace starts on the rendered lesson every time, so hydrating the
//! editor and the history would be dead weight in the browser bundle (about
//! 4 KB gzipped).

use leptos::{html, prelude::*};

/// An empty `<div>` on the server; in the browser, `view` is built into it
/// once the island is live and then follows its signals like any view.
pub fn client_only<F, V>(class: &'static str, view: F) -> impl IntoView
where
    F: Fn() -> V + Send + 'static,
    V: Render + 'static,
{
    let host = NodeRef::<html::Div>::new();
    let mut view = Some(view);
    // The effect keeps what it built (and so the view's reactive state)
    // for as long as the island lives.
    Effect::new(move |built| {
        if let Some(Some(state)) = built {
            return Some(state);
        }
        let el: leptos::web_sys::Element = host.get()?.into();
        let mut state = view.take()?.build();
        state.mount(&el, None);
        Some(state)
    });
    view! { <div class=class node_ref=host></div> }
}
