//! Server functions: what the pages ask of the server. Each checks the session
//! itself; the bodies compile only on the server, the browser gets a caller.

pub mod audit;
pub mod classes;
pub mod learn;
pub mod safety;
pub mod lessons;
pub mod school;
pub mod session;

#[cfg(feature = "ssr")]
pub(crate) mod ssr;

use leptos::prelude::ServerFnError;

/// The message of a server-function error, without the framework's prefix.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(m) => m.clone(),
        other => other.to_string(),
    }
}
