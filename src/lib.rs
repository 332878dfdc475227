//! Margin: a lesson editor for teachers with a transparent AI agent in the margin.
//!
//! One crate, two targets: with the `ssr` feature it is the server (axum, SQLite,
//! the agent); with `hydrate` it is the browser bundle that takes over the
//! server-rendered page. Modules that only make sense on the server are gated
//! whole with `#[cfg(feature = "ssr")]`.

// Leptos views are deeply nested types; release builds need more room.
#![recursion_limit = "256"]

pub mod api;
pub mod app;
pub mod chat;
pub mod components;
/// The lesson format, its own crate (`crates/lesson`), the bottom layer.
pub use margin_lesson as lesson;
pub mod models;
pub mod refusals;
pub mod url;
mod wire_enum;
#[cfg(feature = "hydrate")]
mod split_room;

#[cfg(feature = "ssr")]
pub mod agent;
#[cfg(feature = "ssr")]
pub mod net;
#[cfg(feature = "ssr")]
pub mod scripted;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod settings;

/// Entry point of the browser bundle. Leptos' island script calls this, then
/// hydrates each island on the page. Only pages with an island load the
/// bundle (`app::has_island`); each island marks the page hydrated itself.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
