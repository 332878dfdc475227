//! Everything that runs only on the server. One folder per domain, each with
//! the same inner names (`routes.rs` for its HTTP doors, its queries in a file
//! named for what they store, `pages.rs` where it draws pages):
//!
//! - `accounts`: sign-in, sessions, the signed-in user, schools, invites,
//!   operators, budgets and storage quotas.
//! - `lessons`: lessons, revisions, the library and trash, proposals, lesson
//!   events, import reports, printing.
//! - `chats`: chat sessions and messages, and the turn engine (`chats::turns`).
//! - `classes`, `material`, `reactions`: classes and students, the teacher's
//!   material, automatic turns.
//! - `http`: the edge every request crosses (router, body limits, CSRF,
//!   headers, extractors, errors, client addresses, connections, rate limits).
//!
//! Beside them: the configuration (`config`), the shared state (`state`), the
//! clocks tests move (`clock`), the database (`db`), notes between instances
//! (`bus`), start-up and the command line.

pub mod accounts;
pub mod bus;
pub mod chats;
pub mod classes;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod http;
pub mod ids;
pub mod lessons;
pub mod lti;
pub mod material;
pub mod ops;
pub mod reactions;
pub mod standards;
pub mod startup;
pub mod state;
