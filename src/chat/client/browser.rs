//! The browser half of the client (WASM only): `fetch`, reading a turn's
//! event stream as it arrives through [`SseParser`], and the browser's own
//! dialogs.

use js_sys::{Reflect, Uint8Array};
use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, ReadableStreamDefaultReader, Request, RequestInit, Response};

use super::{ClientError, StreamEnd};
use crate::chat::{
    events::ChatEvent,
    sse::{SseMessage, SseParser},
};

fn js_error(e: JsValue) -> ClientError {
    ClientError::Network(e.as_string().or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string())).unwrap_or_else(|| "unknown error".into()))
}

async fn send(method: &str, url: &str, body: Option<String>, extra: &[(&str, String)]) -> Result<Response, ClientError> {
    let init = RequestInit::new();
    init.set_method(method);
    let headers = Headers::new().map_err(js_error)?;
    if let Some(body) = &body {
        headers.set("Content-Type", "application/json").map_err(js_error)?;
        init.set_body(&JsValue::from_str(body));
    }
    for (k, v) in extra {
        headers.set(k, v).map_err(js_error)?;
    }
    init.set_headers(&headers);
    let request = Request::new_with_str_and_init(url, &init).map_err(js_error)?;
    let window = web_sys::window().ok_or_else(|| ClientError::Network("no window".into()))?;
    let response: Response = JsFuture::from(window.fetch_with_request(&request)).await.map_err(js_error)?.dyn_into().map_err(js_error)?;
    if response.ok() {
        return Ok(response);
    }
    let status = response.status();
    let text = match response.text() {
        Ok(p) => JsFuture::from(p).await.ok().and_then(|t| t.as_string()).unwrap_or_default(),
        Err(_) => String::new(),
    };
    let (message, conflicts) = match serde_json::from_str::<crate::models::ErrorReply>(&text) {
        Ok(b) => (b.error, b.conflicts),
        Err(_) => (format!("The server answered {status}."), Vec::new()),
    };
    Err(ClientError::Http { status, message, conflicts })
}

/// A JSON call; `T = ()` for empty answers.
pub async fn json<T: DeserializeOwned>(method: &str, url: &str, body: Option<&impl Serialize>) -> Result<T, ClientError> {
    let body = body.map(|b| serde_json::to_string(b).unwrap_or_default());
    let text = Box::pin(answer_text(method, url, body)).await?;
    serde_json::from_str(&text).map_err(|e| ClientError::Network(format!("unreadable answer: {e}")))
}

/// The text of a call's answer (`null` for an empty one). Not generic, so
/// every `json::<T>` shares it rather than carrying its own copy.
pub async fn answer_text(method: &str, url: &str, body: Option<String>) -> Result<String, ClientError> {
    let response = send(method, url, body, &[]).await?;
    let text = JsFuture::from(response.text().map_err(js_error)?).await.map_err(js_error)?.as_string().unwrap_or_default();
    Ok(if text.trim().is_empty() { "null".to_string() } else { text })
}

/// Opens a turn's stream (a new turn with `body`, or a resume with `after`)
/// and hands every event to `on_event`. `on_open` gets the turn id.
pub async fn stream(
    url: &str,
    body: Option<String>,
    after: u64,
    mut on_open: impl FnMut(Option<String>),
    mut on_event: impl FnMut(ChatEvent),
) -> Result<StreamEnd, ClientError> {
    let mut on_message = |message: SseMessage| {
        let Ok(event) = ChatEvent::from_sse(&message.event, &message.data) else { return true };
        let terminal = event.is_terminal();
        on_event(event);
        !terminal
    };
    messages(url, body, after, &mut on_open, &mut on_message).await
}

/// Opens an event stream and hands every message to `on_message` until it
/// answers `false` (`Finished`) or the stream ends (`Dropped`). Callbacks
/// are `dyn`, so the one reader serves every kind of stream in the bundle.
pub async fn messages(
    url: &str,
    body: Option<String>,
    after: u64,
    on_open: &mut dyn FnMut(Option<String>),
    on_message: &mut dyn FnMut(SseMessage) -> bool,
) -> Result<StreamEnd, ClientError> {
    let method = if body.is_some() { "POST" } else { "GET" };
    let mut extra = vec![("Accept", "text/event-stream".to_string())];
    if after > 0 {
        extra.push(("Last-Event-ID", after.to_string()));
    }
    let response = send(method, url, body, &extra).await?;
    on_open(response.headers().get("x-turn-id").ok().flatten());
    let body = response.body().ok_or_else(|| ClientError::Network("no response body".into()))?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut parser = SseParser::new();
    let mut last_id = after;
    loop {
        let chunk = match JsFuture::from(reader.read()).await {
            Ok(c) => c,
            Err(_) => return Ok(StreamEnd::Dropped { last_id }),
        };
        if Reflect::get(&chunk, &JsValue::from_str("done")).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            return Ok(StreamEnd::Dropped { last_id });
        }
        let value = Reflect::get(&chunk, &JsValue::from_str("value")).map_err(js_error)?;
        let bytes = Uint8Array::new(&value).to_vec();
        for message in parser.push(&bytes) {
            if let Some(id) = message.id.as_deref().and_then(|i| i.parse::<u64>().ok()) {
                last_id = id;
            }
            if !on_message(message) {
                let _ = reader.cancel();
                return Ok(StreamEnd::Finished);
            }
        }
    }
}

/// Waits `ms` milliseconds (a `setTimeout`).
pub async fn pause(ms: i32) {
    let wait = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = JsFuture::from(wait).await;
}

/// Asks for a line of text (the browser's prompt); `None` when dismissed.
pub fn ask(message: &str, default: &str) -> Option<String> {
    web_sys::window()?.prompt_with_message_and_default(message, default).ok().flatten()
}

/// Asks for a yes or no (the browser's confirm).
pub fn confirm(message: &str) -> bool {
    web_sys::window().and_then(|w| w.confirm_with_message(message).ok()).unwrap_or(false)
}
