//! The lesson rendered, for the teacher (answers shown) or as a student
//! preview. The HTML comes from the server ([`crate::lesson::render_both`],
//! which escapes everything the document says), for both audiences at once;
//! this component only shows the one asked for.

use leptos::{html, prelude::*};

pub use crate::lesson::Audience;
use crate::lesson::LessonHtml;

/// Blocks to mark as changed (by id) and whether the marks show.
#[derive(Clone, Copy)]
pub struct Highlight {
    pub blocks: Signal<Vec<String>>,
    pub on: Signal<bool>,
}

#[component]
pub fn LessonView(
    #[prop(into)] html: Signal<LessonHtml>,
    #[prop(into)] audience: Signal<Audience>,
    #[prop(optional)] highlight: Option<Highlight>,
) -> impl IntoView {
    let shown = move || {
        let who = audience.get();
        html.with(|h| if who == Audience::Student { h.student.clone() } else { h.teacher.clone() })
    };
    let article = NodeRef::<html::Article>::new();
    // Changed blocks carry `data-changed` once rendered; the class on the
    // article decides whether that shows. (Ids are letters, digits, `-`
    // and `_`, so they are safe inside the selector.)
    if let Some(h) = highlight {
        Effect::new(move |_| {
            let ids = h.blocks.get();
            html.track();
            audience.track();
            let Some(el) = article.get() else { return };
            for id in ids {
                if let Ok(Some(block)) = el.query_selector(&format!("[data-id=\"{id}\"]")) {
                    let _ = block.set_attribute("data-changed", "");
                }
            }
        });
    }
    let marks = move || highlight.is_some_and(|h| h.on.get());
    view! {
        <article class="lesson-view" node_ref=article class:student=move || audience.get() == Audience::Student
            class:show-changes=marks inner_html=shown></article>
    }
}
