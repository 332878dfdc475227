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
//! - `lti`, `standards`: the LMS connection (LTI 1.3), and standards
//!   frameworks with the lessons and classes that cover them.
//! - `edge` (on top): the router that gathers every domain's routes, and the
//!   layers that know the domains (body limits, CSRF, the sign-in guard).
//! - `http` (the floor): what of HTTP every domain shares (extractors, client addresses, headers, outbound rules, rate
//!   limits).
//!
//! Beside them: the configuration (`config`), the shared state (`state`), the
//! clocks tests move (`clock`), the one error shape (`error`), the database (`db`), ids (`ids`), notes
//! between instances (`bus`), health and metrics (`ops`), start-up and the
//! command line. Which domain may import which is written down, and checked,
//! in `tests/all/layout.rs`.

pub mod accounts;
pub mod audit;
pub mod bus;
pub mod chats;
pub mod classes;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod edge;
pub mod error;
pub mod http;
pub mod ids;
pub mod lessons;
pub mod lti;
pub mod material;
pub mod metrics;
pub mod ops;
pub mod reactions;
pub mod safety;
pub mod standards;
pub mod startup;
pub mod state;
