//! The window's title for a page named by what someone typed (a lesson's or
//! a class's name, a student's email).
//!
//! leptos_meta 0.8.7 writes `<Title text=…>` into the page as it is, not
//! escaped: a lesson called `</title><b>x</b>` would put markup in every
//! page that names it (found by `tests/all/students.rs`). The text is escaped
//! here, once, until leptos_meta does it itself; that test fails in either
//! direction (markup, or `&amp;lt;` escaped twice).

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn PageTitle(#[prop(into)] text: String) -> impl IntoView {
    view! { <Title text=crate::lesson::escape_text(&format!("{text} · Margin"))/> }
}
