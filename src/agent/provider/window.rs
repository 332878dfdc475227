//! How much the model reads at once, as the server running it says. A
//! school's own server (llama.cpp, vLLM, Ollama) often runs a model with a
//! window far smaller than a provider's usual models: Margin's default for
//! them, 32,768 tokens, against a llama.cpp server started with 8,192 made
//! every request a refusal. Unless `AI_CONTEXT_TOKENS` says, the window is
//! read from the server when Margin starts:
//! - vLLM and OpenRouter list it with the model (`GET /v1/models`:
//!   `max_model_len`, `context_length`);
//! - llama.cpp's `llama-server` gives the window of each of its slots
//!   (`GET /props`: `default_generation_settings.n_ctx`);
//! - Ollama gives the model's `num_ctx` when it was set up with one
//!   (`POST /api/show`).
//!
//! A refusal that names the window teaches it too (`overflow`).

use std::{
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use serde_json::{json, Value};

use super::{Provider, ProviderKind};

/// How long each question to the server may take.
const ASK: Duration = Duration::from_secs(5);

/// The model's context window, in tokens, shared by every agent on it.
#[derive(Debug)]
pub struct ContextWindow(AtomicU32);

impl ContextWindow {
    pub fn new(tokens: u32) -> Self {
        Self(AtomicU32::new(tokens))
    }

    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// What the server said, from `whence` (for the log).
    pub fn learn(&self, tokens: u32, whence: &str) {
        let before = self.0.swap(tokens, Ordering::Relaxed);
        if before != tokens {
            tracing::info!(tokens, before, whence, "the model's context window");
        }
    }
}

impl Provider {
    /// Asks the server for the model's window and keeps it; returns it, or
    /// `None` when the server does not say (the configured one stays).
    pub async fn read_window(&self) -> Option<u32> {
        let (tokens, whence) = match self.kind {
            ProviderKind::Ollama => (self.ollama_window().await?, "Ollama's /api/show"),
            ProviderKind::OpenAiCompatible | ProviderKind::Demo => match self.listed_window().await {
                Some(n) => (n, "the server's /v1/models"),
                None => (self.llama_cpp_window().await?, "llama.cpp's /props"),
            },
            // Their model lists do not give it; their usual windows are the defaults.
            ProviderKind::OpenAi | ProviderKind::Anthropic => return None,
        };
        let tokens = tokens.clamp(1_024, 10_000_000);
        self.window.learn(tokens, whence);
        Some(tokens)
    }

    /// The server's root: the base URL without its `/v1`.
    fn root(&self) -> &str {
        let base = self.base_url.trim_end_matches('/');
        base.strip_suffix("/v1").unwrap_or(base)
    }

    async fn ask(&self, request: reqwest::RequestBuilder) -> Option<Value> {
        let request = match &self.key {
            Some(key) => request.bearer_auth(key.expose()),
            None => request,
        };
        let res = tokio::time::timeout(ASK, request.timeout(ASK).send()).await.ok()?.ok()?;
        if !res.status().is_success() {
            return None;
        }
        tokio::time::timeout(ASK, res.json::<Value>()).await.ok()?.ok()
    }

    /// vLLM's `max_model_len`, OpenRouter's `context_length`, for the model in use.
    async fn listed_window(&self) -> Option<u32> {
        let list = self.ask(self.http.get(format!("{}/models", self.base_url.trim_end_matches('/')))).await?;
        let models = list.get("data")?.as_array()?;
        let model = models.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(self.model.as_str())).or_else(|| (models.len() == 1).then(|| &models[0]))?;
        ["max_model_len", "context_length"].iter().find_map(|k| number(model.get(k)))
    }

    /// llama.cpp's window of one slot (what one request may use).
    async fn llama_cpp_window(&self) -> Option<u32> {
        let props = self.ask(self.http.get(format!("{}/props", self.root()))).await?;
        number(props.pointer("/default_generation_settings/n_ctx")).or_else(|| number(props.get("n_ctx")))
    }

    /// The `num_ctx` the model was set up with, if it was.
    async fn ollama_window(&self) -> Option<u32> {
        let shown = self.ask(self.http.post(format!("{}/api/show", self.root())).json(&json!({ "model": self.model }))).await?;
        let parameters = shown.get("parameters")?.as_str()?;
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse().ok()).flatten()
        })
    }
}

fn number(v: Option<&Value>) -> Option<u32> {
    v?.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0)
}
