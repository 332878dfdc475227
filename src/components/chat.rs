//! The chat sidebar: sessions, the conversation with live steps, the input.

pub mod controller;
pub mod input;
pub mod messages;
pub mod review;
pub mod sidebar;
pub mod state;
pub mod steps;
pub mod suggestions;
