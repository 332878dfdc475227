//! The browser's side of the API: JSON calls, a turn's event stream read as
//! it arrives, and the browser's dialogs. Written once for both targets: the
//! calls run in the browser (`client/browser.rs`); on the server, which
//! renders the workspace and runs no event handler or effect, the same
//! functions exist and only say they cannot run there (`client/server.rs`).
//! That pair is the only place the two targets differ.

#[cfg_attr(feature = "hydrate", path = "client/browser.rs")]
#[cfg_attr(not(feature = "hydrate"), path = "client/server.rs")]
mod transport;

pub use transport::{answer_text, ask, confirm, json, messages, pause, stream};

/// Why a call failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientError {
    /// The server answered with an error (its JSON `error` message, and for
    /// an edit that collides with later changes, those of its changes).
    Http { status: u16, message: String, conflicts: Vec<crate::lesson::Change> },
    /// The network or the browser failed.
    Network(String),
}

impl ClientError {
    pub fn message(&self) -> String {
        match self {
            Self::Http { message, .. } => message.clone(),
            Self::Network(m) => format!("The connection failed ({m}). Check your network and try again."),
        }
    }

    /// The changes that collided with later ones, when that was the error.
    pub fn conflicts(&self) -> &[crate::lesson::Change] {
        match self {
            Self::Http { conflicts, .. } => conflicts,
            Self::Network(_) => &[],
        }
    }
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEnd {
    /// The turn's last event (`done`, `cancelled` or `error`) arrived.
    Finished,
    /// The connection ended first; resume after `last_id`.
    Dropped { last_id: u64 },
}
