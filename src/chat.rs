//! The conversation as both sides see it: the events a turn streams to the
//! browser. Defined once here and used by the server (to send) and the
//! browser (to read).

pub mod actions;
pub mod events;
pub mod json_fields;
pub mod message;
pub mod proposal;
pub mod sse;
pub mod tool_args;
pub mod turn;
pub mod markdown;

pub mod client;
