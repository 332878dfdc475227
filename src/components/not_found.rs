//! The one "not found" page, for an address that leads nowhere and for a
//! lesson that does not exist or belongs to another teacher (the two look
//! exactly alike, so nobody learns which lessons exist). Rendered on the
//! server only; it sets the response's status to 404 unless the server
//! already set a status of its own (a failed lookup answers 500).

use leptos::prelude::*;
use leptos_meta::Title;

/// What a missing or someone else's lesson page says.
pub const MISSING_LESSON: &str = "This lesson does not exist, or it belongs to another teacher.";

#[component]
pub fn NotFound(heading: &'static str, text: &'static str) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        let unset = res.0.read().map(|parts| parts.status.is_none()).unwrap_or(true);
        if unset {
            res.set_status(axum::http::StatusCode::NOT_FOUND);
        }
    }
    view! {
        <Title text=format!("{heading} · Margin")/>
        <main class="page narrow">
            <h1>{heading}</h1>
            <p>{text}</p>
            <p><a href="/">"Back to your lessons"</a></p>
        </main>
    }
}
