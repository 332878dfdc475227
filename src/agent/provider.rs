//! The connection to the AI provider through async-openai, and what its
//! failures mean for the teacher.
//!
//! async-openai already retries 429 (unless the quota is used up), 5xx and
//! connection errors with backoff before a stream starts, honouring
//! `Retry-After`, three times at most. Once a stream has started nothing is
//! retried silently.

use async_openai::{
    config::OpenAIConfig,
    error::OpenAIError,
    types::chat::{
        ChatCompletionRequestMessage, ChatCompletionResponseStream, ChatCompletionStreamOptions, ChatCompletionTools,
        CreateChatCompletionRequestArgs,
    },
    Client,
};

use super::config::AiConfig;

/// A failure that ends the turn, with a stable code and a sentence for the teacher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderError {
    pub code: &'static str,
    pub message: String,
}

pub struct Provider {
    client: Client<OpenAIConfig>,
    model: String,
    base_url: String,
}

impl Provider {
    pub fn new(config: &AiConfig) -> Self {
        let key = config.api_key.as_ref().map(|k| k.expose().to_string()).unwrap_or_else(|| "none".into());
        let openai = OpenAIConfig::new().with_api_base(config.base_url.trim_end_matches('/')).with_api_key(key);
        Self { client: Client::with_config(openai), model: config.model.clone(), base_url: config.base_url.clone() }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// Starts one streamed model call.
    pub async fn stream(
        &self,
        messages: Vec<ChatCompletionRequestMessage>,
        tools: Vec<ChatCompletionTools>,
    ) -> Result<ChatCompletionResponseStream, ProviderError> {
        let request = CreateChatCompletionRequestArgs::default()
            .model(self.model.clone())
            .messages(messages)
            .tools(tools)
            .stream(true)
            .stream_options(ChatCompletionStreamOptions { include_usage: Some(true), include_obfuscation: None })
            .build()
            .map_err(|e| ProviderError { code: "internal", message: format!("Could not build the request: {e}") })?;
        self.client.chat().create_stream(request).await.map_err(|e| self.classify(&e, false))
    }

    /// Turns a provider failure into words; `mid_stream` when the reply had begun.
    pub fn classify(&self, e: &OpenAIError, mid_stream: bool) -> ProviderError {
        let err = |code, message: String| ProviderError { code, message };
        match e {
            OpenAIError::ApiError(api) => {
                let status = api.status_code.as_u16();
                let quota = api.api_error.code.as_deref() == Some("insufficient_quota")
                    || api.api_error.r#type.as_deref() == Some("insufficient_quota");
                match status {
                    401 | 403 => err("auth", format!(
                        "The AI provider refused the API key ({status}). Check AI_API_KEY in the server's settings."
                    )),
                    429 if quota => err("quota", "The AI provider says this account has run out of credit or quota.".into()),
                    429 => err("rate_limited", "The AI provider is limiting requests right now. Wait a moment and try again.".into()),
                    404 => err("model_not_found", format!(
                        "The AI provider does not offer the model \"{}\". Check AI_MODEL.", self.model
                    )),
                    400..=499 => err("bad_request", format!("The AI provider rejected the request: {}", api.api_error.message)),
                    _ => err("provider_unavailable", format!(
                        "The AI provider is having trouble ({status}). Try again in a minute."
                    )),
                }
            }
            OpenAIError::Reqwest(r) if r.is_connect() || r.is_timeout() => err(
                "provider_unreachable",
                format!("Could not reach the AI provider at {}.", self.base_url),
            ),
            OpenAIError::Reqwest(_) | OpenAIError::StreamError(_) if mid_stream => err(
                "provider_stream",
                "The connection to the AI provider broke off in the middle of the reply.".into(),
            ),
            OpenAIError::Reqwest(_) | OpenAIError::StreamError(_) => err(
                "provider_unreachable",
                format!("The connection to the AI provider at {} failed.", self.base_url),
            ),
            OpenAIError::JSONDeserialize(..) => err(
                "provider_malformed",
                "The AI provider sent a reply Margin could not read.".into(),
            ),
            other => err("provider_error", format!("The AI provider call failed: {other}")),
        }
    }
}
