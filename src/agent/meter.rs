//! What a turn may spend. Before every model call the agent asks its meter
//! to reserve what the call could cost at most; afterwards it tells the
//! meter what the call used, or an estimate when the provider never said
//! (a call cut short). The agent only asks; where budgets are kept and how
//! they are shared is the server's business (`server::accounts::budget`).

use futures::future::BoxFuture;

use super::provider::ProviderError;

/// How a model call ended, as the meter records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    Complete,
    Failed,
    Cancelled,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// What one model call used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallUsage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Counted by the agent: the provider reported nothing.
    pub estimated: bool,
    pub outcome: CallOutcome,
}

pub trait Meter: Send + Sync {
    /// Reserves up to `tokens` for the next call. An error ends the turn
    /// without calling the provider.
    fn reserve(&self, tokens: u32) -> BoxFuture<'_, Result<(), ProviderError>>;
    /// Settles the call reserved last with what it used.
    fn settle(&self, used: CallUsage) -> BoxFuture<'_, ()>;
}

/// A meter that lets every call through and keeps nothing (tests, tools).
pub struct Unmetered;

impl Meter for Unmetered {
    fn reserve(&self, _: u32) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }

    fn settle(&self, _: CallUsage) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Tokens in a text, roughly: about four bytes a token in English, fewer in
/// other scripts, so three is on the safe side for a reservation.
pub fn estimate_tokens(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(3)).unwrap_or(u32::MAX)
}
