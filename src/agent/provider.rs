//! The connection to the AI provider, and what its failures mean for the
//! teacher.
//!
//! Margin posts the request and reads the event stream itself
//! (`provider::sse`), over reqwest, with async-openai's types for what it
//! sends. Its library reader was not enough: it ends quietly when the
//! connection drops mid-reply, reads an error object sent mid-stream as a
//! malformed chunk, drops the model's reasoning, and bounds no wait.
//!
//! Before the reply starts, a refused connection, a 429 (unless the quota is
//! used up) and a 5xx are retried three times with backoff, honouring
//! `Retry-After`. Once a stream has started nothing is retried silently.
//! Every wait is bounded: connecting, the first byte, and each gap between
//! bytes (`Limits`).

pub mod overflow;
pub mod sse;
pub mod window;
pub mod wire;

use std::{sync::Arc, time::Duration};

use async_openai::types::chat::ChatCompletionTools;
use futures::StreamExt;
use reqwest::{header, StatusCode};
use tokio::time::Instant;

use self::{
    sse::{EventReader, ReadError},
    wire::{ApiError, Chunk, CompletionRequest, ErrorBody, SentMessage},
};
use super::config::{AiConfig, ApiKey, Limits, ProviderKind};
pub use window::ContextWindow;

/// A failure that ends the turn, with a stable code and a sentence for the teacher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderError {
    pub code: &'static str,
    pub message: String,
}

impl ProviderError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    /// The connection broke, or the stream ended before the model finished.
    pub fn cut_off() -> Self {
        Self::new("provider_stream", "The reply was cut off: the connection to the AI provider broke before the reply was finished.")
    }

    fn quota() -> Self {
        Self::new("quota", "The AI provider says this account has run out of credit or quota.")
    }

    fn rate_limited() -> Self {
        Self::new("rate_limited", "The AI provider is limiting requests right now. Wait a moment and try again.")
    }

    fn timeout(what: &str, limit: Duration) -> Self {
        Self::new(
            "provider_timeout",
            format!("The AI provider stopped answering ({what} for {} seconds), so the reply was ended.", limit.as_secs().max(1)),
        )
    }
}

/// Retries before a reply has started.
const RETRIES: u32 = 3;
/// Longest wait between two tries, whatever `Retry-After` says.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(20);

pub struct Provider {
    http: reqwest::Client,
    url: String,
    key: Option<ApiKey>,
    model: String,
    base_url: String,
    kind: ProviderKind,
    limits: Limits,
    /// The model's context window as known now: configured, read from the
    /// server, or learnt from a refusal. Shared by every agent on the model.
    window: Arc<ContextWindow>,
}

/// The fewest tokens a reply is left room for; less, and the request is
/// too long for the model before it is sent.
const MIN_REPLY_TOKENS: u32 = 256;

impl Provider {
    pub fn new(config: &AiConfig) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(config.limits.connect_timeout)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        Self {
            http,
            url: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
            key: config.api_key.clone(),
            model: config.model.clone(),
            base_url: config.base_url.clone(),
            kind: config.provider,
            limits: config.limits.clone(),
            window: Arc::new(ContextWindow::new(config.context_tokens)),
        }
    }

    /// The same provider sharing `window` (every agent on one model).
    pub fn with_window(mut self, window: Arc<ContextWindow>) -> Self {
        self.window = window;
        self
    }

    /// The model's context window as known now.
    pub fn window(&self) -> &Arc<ContextWindow> {
        &self.window
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// Starts one streamed model call.
    pub async fn stream(
        &self,
        messages: &[SentMessage<'_>],
        tools: &[ChatCompletionTools],
    ) -> Result<RoundStream, ProviderError> {
        self.send(self.request_body(messages, tools)?).await
    }

    /// The body of a call, written once: its size is what the call's prompt
    /// is reserved by (`meter`) before it is sent.
    ///
    /// Its output cap is `AI_MAX_TOKENS`, or what the model's window leaves
    /// beside the prompt when that is less: a server refuses a request whose
    /// prompt and cap together pass its window (vLLM), or fills its window
    /// and cuts the reply (llama.cpp).
    pub fn request_body(&self, messages: &[SentMessage<'_>], tools: &[ChatCompletionTools]) -> Result<bytes::Bytes, ProviderError> {
        let write = |cap: Option<u32>| {
            serde_json::to_vec(&CompletionRequest::new(&self.model, messages, tools, cap.map(|n| (n, self.limits.max_tokens_field))))
                .map_err(|e| ProviderError::new("internal", format!("Could not write the request: {e}")))
        };
        let mut body = write(self.limits.max_tokens)?;
        if let Some(cap) = self.limits.max_tokens {
            // The body's bytes, a tenth more for what the estimate misses.
            let prompt = (body.len() as f64 / super::context::bytes_per_token(self.kind) * 1.1).ceil() as u32;
            let room = self.window.get().saturating_sub(prompt);
            if room < cap {
                if room < MIN_REPLY_TOKENS {
                    return Err(overflow::too_long_here(self.window.get()));
                }
                body = write(Some(room))?;
            }
        }
        // The body is held until the provider answers (and for retries); as
        // written it may hold up to twice its length (the buffer doubles as
        // it grows), which every turn starting at once would pay for.
        body.shrink_to_fit();
        Ok(bytes::Bytes::from(body))
    }

    /// The most a call may write (`AI_MAX_TOKENS`), if capped.
    pub fn max_tokens(&self) -> Option<u32> {
        self.limits.max_tokens
    }

    /// Sends a call's body and opens its stream, retrying what is worth it.
    pub async fn send(&self, body: bytes::Bytes) -> Result<RoundStream, ProviderError> {
        let mut attempt = 0;
        loop {
            let first_byte_by = Instant::now() + self.limits.first_byte_timeout;
            let mut request = self.http.post(&self.url).header(header::CONTENT_TYPE, "application/json").body(body.clone());
            if let Some(key) = &self.key {
                request = request.bearer_auth(key.expose());
            }
            let sent = tokio::time::timeout_at(first_byte_by, request.send()).await;
            let (err, wait) = match sent {
                Err(_) => return Err(ProviderError::timeout("no answer", self.limits.first_byte_timeout)),
                Ok(Err(e)) if e.is_timeout() => {
                    return Err(ProviderError::timeout("could not connect", self.limits.connect_timeout))
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "the AI provider could not be reached");
                    let err = ProviderError::new("provider_unreachable", format!("Could not reach the AI provider at {}.", self.base_url));
                    (err, e.is_connect().then(|| backoff(attempt)))
                }
                Ok(Ok(res)) if res.status().is_success() => {
                    let body = res.bytes_stream().map(|r| r.map_err(|e| e.to_string()));
                    return Ok(RoundStream {
                        reader: EventReader::new(body, first_byte_by, self.limits.idle_timeout),
                        first_byte_timeout: self.limits.first_byte_timeout,
                        idle_timeout: self.limits.idle_timeout,
                    });
                }
                Ok(Ok(res)) => {
                    let status = res.status();
                    let retry_after = res
                        .headers()
                        .get(header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let text = tokio::time::timeout_at(first_byte_by, res.bytes()).await.ok().and_then(Result::ok).unwrap_or_default();
                    let api = serde_json::from_slice::<ErrorBody>(&text).ok().and_then(|b| b.error).unwrap_or_else(|| ApiError {
                        message: String::from_utf8_lossy(&text).chars().take(500).collect(),
                        ..ApiError::default()
                    });
                    tracing::warn!(%status, provider_message = %api.message, "the AI provider refused the request");
                    let err = self.http_error(status, &api);
                    let retry = (status == StatusCode::TOO_MANY_REQUESTS && err.code != "quota") || status.is_server_error();
                    (err, retry.then(|| retry_after.unwrap_or_else(|| backoff(attempt))))
                }
            };
            match wait {
                Some(wait) if attempt < RETRIES => {
                    tokio::time::sleep(wait.min(MAX_RETRY_WAIT)).await;
                    attempt += 1;
                }
                _ => return Err(err),
            }
        }
    }

    /// An error answer to the request, in words.
    fn http_error(&self, status: StatusCode, api: &ApiError) -> ProviderError {
        if let Some(o) = overflow::context_overflow(api) {
            if let Some(n) = o.window {
                self.window.learn(n, "the AI server's refusal");
            }
            return o.error;
        }
        if let Some(e) = overflow::call_unreadable(api) {
            return e;
        }
        let words = api.words();
        let quota = words.contains("insufficient_quota");
        let code = status.as_u16();
        match code {
            401 | 403 => ProviderError::new(
                "auth",
                format!("The AI provider refused the API key ({code}). Check AI_API_KEY in the server's settings."),
            ),
            429 if quota => ProviderError::quota(),
            429 => ProviderError::rate_limited(),
            404 => ProviderError::new(
                "model_not_found",
                format!("The AI provider does not offer the model \"{}\". Check AI_MODEL.", self.model),
            ),
            400..=499 => ProviderError::new("bad_request", format!("The AI provider rejected the request: {}", api.message)),
            _ => ProviderError::new("provider_unavailable", format!("The AI provider is having trouble ({code}). Try again in a minute.")),
        }
    }
}

/// An error object the provider sent in the middle of a stream, in words.
/// The provider's own message goes to the log, not to the teacher.
pub fn stream_error(api: &ApiError) -> ProviderError {
    let words = api.words();
    let status = api.status().unwrap_or(0);
    tracing::warn!(provider_message = %api.message, kind = %words.trim(), "the AI provider sent an error mid-stream");
    if let Some(o) = overflow::context_overflow(api) {
        return o.error;
    }
    if let Some(e) = overflow::call_unreadable(api) {
        return e;
    }
    if words.contains("insufficient_quota") || words.contains("quota") {
        ProviderError::quota()
    } else if words.contains("rate_limit") || status == 429 {
        ProviderError::rate_limited()
    } else if words.contains("auth") || status == 401 || status == 403 {
        ProviderError::new("auth", "The AI provider refused the API key. Check AI_API_KEY in the server's settings.")
    } else if words.contains("invalid_request") || (400..500).contains(&status) {
        ProviderError::new("bad_request", "The AI provider rejected the request part-way through the reply.")
    } else if words.contains("server_error") || words.contains("overloaded") || words.contains("unavailable") || status >= 500 {
        ProviderError::new("provider_unavailable", "The AI provider ran into trouble part-way through the reply. Try again in a minute.")
    } else {
        ProviderError::new("provider_error", "The AI provider reported an error part-way through the reply.")
    }
}

/// 100 ms, 200 ms, 400 ms… before try `attempt + 1`.
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100).saturating_mul(2u32.saturating_pow(attempt)).min(Duration::from_secs(8))
}

/// One model call's stream of chunks.
pub struct RoundStream {
    reader: EventReader,
    /// The limits the reader keeps, for the message when one runs out.
    first_byte_timeout: Duration,
    idle_timeout: Duration,
}

impl RoundStream {
    /// The next chunk; `None` when the stream has ended. An error object
    /// from the provider, a broken connection, silence and unreadable data
    /// are errors.
    pub async fn next(&mut self) -> Result<Option<Chunk>, ProviderError> {
        let data = match self.reader.next().await {
            Ok(Some(data)) => data,
            Ok(None) => return Ok(None),
            Err(ReadError::NoFirstByte) => {
                return Err(ProviderError::timeout("no answer", self.first_byte_timeout));
            }
            Err(ReadError::Idle) => {
                return Err(ProviderError::timeout("nothing more arrived", self.idle_timeout));
            }
            Err(ReadError::Broken(e)) => {
                tracing::warn!(error = %e, "the AI provider's stream broke");
                return Err(ProviderError::cut_off());
            }
        };
        let chunk: Chunk = serde_json::from_str(&data).map_err(|e| {
            tracing::warn!(error = %e, "the AI provider sent an unreadable chunk");
            ProviderError::new("provider_malformed", "The AI provider sent a reply Margin could not read.")
        })?;
        if let Some(api) = &chunk.error {
            return Err(stream_error(api));
        }
        Ok(Some(chunk))
    }

    /// Whether the stream ended with `[DONE]`.
    pub fn saw_done(&self) -> bool {
        self.reader.saw_done()
    }
}
