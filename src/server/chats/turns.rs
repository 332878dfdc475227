//! The turn engine: chat turns that survive the client.
//!
//! A turn runs in its own task, detached from the HTTP request that started
//! it (`start`, `run`). Every event it produces is numbered and kept in the
//! turn's log (`hub`), so any number of readers (the first response, a client
//! that reconnects with `Last-Event-ID`, a reloaded page) can read from any
//! point, each event exactly once, and then follow the live turn (`sse`).
//! The assistant message is written to the database as the turn goes and
//! finished when it ends, whatever happened to the readers; the lesson is
//! edited through `document`. The HTTP handlers in `chat_routes` only check
//! the request and call in here.

mod approval;
mod compact;
mod desk;
mod document;
mod gate;
mod hub;
mod kind;
mod on_behalf;
mod pause;
pub mod leases;
pub mod meter;
pub mod relay;
pub mod remote;
pub mod resume;
mod run;
mod sse;
mod start;
pub mod store;
pub mod stored_reads;

pub use hub::{TurnHub, TurnLog, FINISHED_BUDGET, LEASE, LIVE_EVENTS};
pub use remote::{remote_batches, remote_response};
pub use on_behalf::{start_for, OnBehalf};
pub use sse::{follow, live_response, replay, replay_response, with_turn_headers};
pub use kind::TurnKind;
pub use start::{cancel, start, tell_lesson_when_done, CancelStatus, NewTurn};
