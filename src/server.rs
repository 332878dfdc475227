//! Everything that runs only on the server: configuration, database, accounts,
//! HTTP routes and start-up.

pub mod auth;
pub mod auth_routes;
pub mod config;
pub mod db;
pub mod error;
pub mod guard;
pub mod ids;
pub mod lessons;
pub mod router;
pub mod startup;
pub mod state;
