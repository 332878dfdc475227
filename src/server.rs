//! Everything that runs only on the server: configuration, database, accounts,
//! HTTP routes and start-up.

pub mod ai;
pub mod auth;
pub mod auth_routes;
pub mod bodies;
pub mod bus;
pub mod chat_routes;
pub mod client_addr;
pub mod chats;
pub mod config;
pub mod connections;
pub mod csrf;
pub mod current_user;
pub mod db;
pub mod error;
pub mod extract;
pub mod guard;
pub mod headers;
pub mod ids;
pub mod import_reports;
pub mod lesson_api;
pub mod lesson_events;
pub mod lesson_forms;
pub mod lessons;
pub mod library;
pub mod library_api;
pub mod limits;
pub mod proposal_api;
pub mod proposals;
pub mod router;
pub mod startup;
pub mod state;
pub mod turns;
