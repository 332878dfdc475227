//! Tells tests (and anyone curious) that a page has become interactive: sets
//! `data-hydrated="true"` on `<body>`. Pages are server-rendered with islands;
//! each island calls this once it is hydrated; a page without an island says
//! it in the HTML the server draws (`app::shell`), as it loads no code.

use leptos::prelude::*;

pub fn mark_hydrated() {
    if let Some(body) = document().body() {
        let _ = body.set_attribute("data-hydrated", "true");
    }
}
