//! The lesson rendered, for the teacher (answers shown) or as a student
//! preview. The HTML comes from the server ([`crate::lesson::render_both`],
//! which escapes everything the document says), for both audiences at once;
//! this component only shows the one asked for.

use leptos::prelude::*;

pub use crate::lesson::Audience;
use crate::lesson::LessonHtml;

/// `preview`, when it holds a lesson, is shown instead of `html` (a
/// suggested change being previewed).
#[component]
pub fn LessonView(
    #[prop(into)] html: Signal<LessonHtml>,
    #[prop(into)] audience: Signal<Audience>,
    #[prop(optional)] preview: Option<RwSignal<Option<LessonHtml>>>,
) -> impl IntoView {
    let shown = move || {
        let who = audience.get();
        let pick = |h: &LessonHtml| if who == Audience::Student { h.student.clone() } else { h.teacher.clone() };
        match preview.and_then(|p| p.with(|p| p.as_ref().map(pick))) {
            Some(previewed) => previewed,
            None => html.with(pick),
        }
    };
    view! {
        <article class="lesson-view" class:student=move || audience.get() == Audience::Student inner_html=shown></article>
    }
}

/// A style sheet that marks the blocks the assistant's last edit changed
/// (by their `data-id`, in the lesson itself and not in a version the
/// History shows), while `on`: a few CSS rules instead of code that
/// finds and marks elements after every render. Ids are letters, digits,
/// `-` and `_` (anything else is left out), so they are safe in a selector.
pub fn changed_blocks_css(blocks: &[String], on: bool) -> String {
    if !on {
        return String::new();
    }
    let selectors: Vec<String> = blocks
        .iter()
        .filter(|id| id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .flat_map(|id| [format!(".document-pane > .lesson-view [data-id=\"{id}\"]"), format!(".editor-host > .lesson-view > [data-id=\"{id}\"] > .block-text"), format!(".editor-host > .lesson-view > [data-id=\"{id}\"] > .exercise-edit")])
        .collect();
    if selectors.is_empty() {
        return String::new();
    }
    format!("{}{{background:#fff3c4;box-shadow:-4px 0 0 #d4a72c;border-radius:2px}}", selectors.join(","))
}
