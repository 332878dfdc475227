//! Tells tests (and anyone curious) that a page has become interactive: sets
//! `data-hydrated="true"` on `<body>`. Pages are server-rendered with islands;
//! each island calls this once it is hydrated, and `hydrate()` calls it
//! directly on pages that have no island.

use leptos::prelude::*;

pub fn mark_hydrated() {
    if let Some(body) = document().body() {
        let _ = body.set_attribute("data-hydrated", "true");
    }
}
