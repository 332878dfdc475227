//! The lesson rendered from its XML, for the teacher (answers shown) or as a
//! student preview. The HTML itself comes from [`crate::lesson::to_html`],
//! which escapes everything the document says; this component only re-renders
//! it when the XML or the audience changes.

use leptos::prelude::*;

pub use crate::lesson::Audience;
use crate::lesson::{self, escape_text};

#[component]
pub fn LessonView(#[prop(into)] xml: Signal<String>, #[prop(into)] audience: Signal<Audience>) -> impl IntoView {
    let html = move || {
        let who = audience.get();
        xml.with(|xml| match lesson::parse(xml) {
            Ok(root) => lesson::to_html(&root, who),
            Err(e) => format!(
                "<p class=\"form-error\" role=\"alert\">This lesson cannot be shown: {}</p>",
                escape_text(&e.to_string())
            ),
        })
    };
    view! {
        <article class="lesson-view" class:student=move || audience.get() == Audience::Student inner_html=html></article>
    }
}
