//! The lesson rendered, for the teacher (answers shown) or as a student
//! preview. The HTML comes from the server ([`crate::lesson::render_both`],
//! which escapes everything the document says), for both audiences at once;
//! this component only shows the one asked for.

use leptos::prelude::*;

pub use crate::lesson::Audience;
use crate::lesson::LessonHtml;

#[component]
pub fn LessonView(#[prop(into)] html: Signal<LessonHtml>, #[prop(into)] audience: Signal<Audience>) -> impl IntoView {
    let shown = move || {
        let who = audience.get();
        html.with(|h| if who == Audience::Student { h.student.clone() } else { h.teacher.clone() })
    };
    view! {
        <article class="lesson-view" class:student=move || audience.get() == Audience::Student inner_html=shown></article>
    }
}
