//! The pages of classes: for teachers their classes, one class, a lesson's
//! results and one student's work; for students their classes and the page
//! a join link opens. Rendered on the server with no island (they cost the
//! browser no code); every change is a plain form (`server::classes`).

pub mod class_list;
pub mod class_page;
pub mod join_page;
pub mod my_classes;
pub mod results_page;
pub mod standards_page;
pub mod student_work;

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

/// The sentences a page shows for the error codes its address may carry.
/// Only codes travel in an address, never text: a link someone sends a
/// teacher or a student cannot make Margin's page say what they like.
const PAGE_ERRORS: [(&str, &str); 2] = [
    ("name", "Give the class a name of at most 80 characters."),
    ("code", "That class code does not work. Check it, or ask your teacher for the new one."),
];

/// The sentence for an error code from an address; nothing for any other text.
pub fn page_error(code: Option<&str>) -> Option<&'static str> {
    let code = code?;
    PAGE_ERRORS.iter().find(|(c, _)| *c == code).map(|(_, sentence)| *sentence)
}

/// What went wrong, when the address says something did (`?error=`).
#[component]
pub fn ErrorLine() -> impl IntoView {
    let query = use_query_map();
    move || page_error(query.read().get("error").as_deref()).map(|e| view! { <p class="form-error" role="alert">{e}</p> })
}

/// A server function's error, as a line on the page.
#[component]
pub fn Failed(error: ServerFnError) -> impl IntoView {
    view! { <p class="form-error" role="alert">{crate::api::error_text(&error)}</p> }
}

#[cfg(test)]
mod tests {
    use super::page_error;

    #[test]
    fn only_known_codes_become_sentences() {
        assert_eq!(page_error(Some("code")), Some("That class code does not work. Check it, or ask your teacher for the new one."));
        assert_eq!(page_error(Some("Your account was deleted")), None);
        assert_eq!(page_error(None), None);
    }
}
