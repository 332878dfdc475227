//! The server half of the client. The server renders the workspace without
//! running its effects or event handlers, so none of these is ever called
//! there; they exist so that the code calling them is written once.

use serde::{de::DeserializeOwned, Serialize};

use super::{ClientError, StreamEnd};
use crate::chat::{events::ChatEvent, sse::SseMessage};

fn browser_only() -> ClientError {
    ClientError::Network("this runs in the browser only".into())
}

pub async fn json<T: DeserializeOwned>(_method: &str, _url: &str, _body: Option<&impl Serialize>) -> Result<T, ClientError> {
    Err(browser_only())
}

pub async fn answer_text(_method: &str, _url: &str, _body: Option<String>) -> Result<String, ClientError> {
    Err(browser_only())
}

pub async fn stream(
    _url: &str,
    _body: Option<String>,
    _after: u64,
    _on_open: impl FnMut(Option<String>),
    _on_event: impl FnMut(ChatEvent),
) -> Result<StreamEnd, ClientError> {
    Err(browser_only())
}

pub async fn messages(
    _url: &str,
    _body: Option<String>,
    _after: u64,
    _on_open: &mut dyn FnMut(Option<String>),
    _on_message: &mut dyn FnMut(SseMessage) -> bool,
) -> Result<StreamEnd, ClientError> {
    Err(browser_only())
}

pub async fn pause(_ms: i32) {}

pub fn ask(_message: &str, _default: &str) -> Option<String> {
    None
}

pub fn confirm(_message: &str) -> bool {
    false
}
