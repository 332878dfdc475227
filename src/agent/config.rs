//! Which AI provider to talk to, read from the environment. The API key is
//! wrapped so that it never shows up in logs, debug output or responses.

use std::{fmt, path::PathBuf, time::Duration};

use crate::settings::Env;

pub use super::provider::wire::MaxTokensField;

/// The kinds of provider. All speak OpenAI's chat-completions protocol; they
/// differ in their default address and model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Ollama,
    OpenAiCompatible,
    /// The scripted model, started inside the server: offline, always labelled.
    Demo,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(Self::OpenAi),
            "anthropic" => Some(Self::Anthropic),
            "ollama" => Some(Self::Ollama),
            "openai-compatible" | "compatible" | "custom" => Some(Self::OpenAiCompatible),
            "demo" | "scripted" => Some(Self::Demo),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::OpenAiCompatible => "openai-compatible",
            Self::Demo => "demo",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
            Self::Ollama => "http://127.0.0.1:11434/v1",
            Self::OpenAiCompatible | Self::Demo => "",
        }
    }

    fn default_model(self) -> &'static str {
        match self {
            Self::OpenAi => "gpt-4o-mini",
            Self::Anthropic => "claude-sonnet-4-5",
            Self::Ollama => "llama3.1",
            Self::OpenAiCompatible => "",
            Self::Demo => "margin-demo",
        }
    }

    /// Whether this provider refuses requests without a key.
    fn needs_key(self) -> bool {
        matches!(self, Self::OpenAi | Self::Anthropic)
    }
}

/// An API key. `Debug` and `Display` never show it.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
    /// The key itself, for the provider's Authorization header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

#[derive(Clone, Debug)]
pub struct AiConfig {
    pub provider: ProviderKind,
    pub api_key: Option<ApiKey>,
    /// Empty for the demo until the scripted server has started.
    pub base_url: String,
    pub model: String,
    /// Most model calls in one turn.
    pub max_steps: u32,
    /// How many earlier messages of the session the model sees.
    pub history_messages: usize,
    /// `AI_CONTEXT_TOKENS`: the model's context window, which the prompt,
    /// the conversation and the reply share (`context`).
    pub context_tokens: u32,
    /// Whether `AI_CONTEXT_TOKENS` was set: then the server is not asked.
    pub context_tokens_said: bool,
    /// Where `chat/base.md` and `chat/skills/*.md` live.
    pub prompts_dir: PathBuf,
    /// The brakes on every turn.
    pub limits: Limits,
}

/// The context window of a provider's usual models, unless `AI_CONTEXT_TOKENS` says.
pub fn default_window(kind: ProviderKind) -> u32 {
    match kind {
        ProviderKind::OpenAi => 128_000,
        ProviderKind::Anthropic => 200_000,
        // Ollama's own default window is small unless a model is set up otherwise.
        ProviderKind::Ollama => 8_192,
        ProviderKind::OpenAiCompatible | ProviderKind::Demo => 32_768,
    }
}

/// Most tokens one model call may write, unless `AI_MAX_TOKENS` says otherwise.
const DEFAULT_MAX_TOKENS: u32 = 16_000;

/// Bounds on every wait and every size in a turn, so that no provider fault
/// holds a chat or fills the server's memory.
#[derive(Clone, Debug)]
pub struct Limits {
    /// `AI_CONNECT_TIMEOUT_SECS`: to open a connection to the provider.
    pub connect_timeout: Duration,
    /// `AI_FIRST_BYTE_TIMEOUT_SECS`: from sending a request to the first byte of its answer.
    pub first_byte_timeout: Duration,
    /// `AI_IDLE_TIMEOUT_SECS`: the longest gap between two bytes of a reply.
    pub idle_timeout: Duration,
    /// `AI_TURN_TIMEOUT_SECS`: a whole turn, all its model calls and steps.
    pub turn_timeout: Duration,
    /// `AI_MAX_TOKENS`: the most tokens one model call may write.
    pub max_tokens: Option<u32>,
    /// Which field carries `max_tokens` (`AI_MAX_TOKENS_FIELD` overrides the guess).
    pub max_tokens_field: MaxTokensField,
    /// The longest reply text of a turn, in bytes.
    pub max_reply_bytes: usize,
    /// The largest arguments of one tool call, in bytes (above the lesson size cap).
    pub max_call_bytes: usize,
}

impl Limits {
    /// The defaults, for a provider at `base_url`.
    pub fn defaults(base_url: &str) -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(60),
            turn_timeout: Duration::from_secs(600),
            max_tokens: Some(DEFAULT_MAX_TOKENS),
            max_tokens_field: guess_max_tokens_field(base_url),
            max_reply_bytes: 400 * 1024,
            max_call_bytes: 2 * crate::lesson::MAX_BYTES + 16 * 1024,
        }
    }
}

/// OpenAI's own API and Azure's take `max_completion_tokens`; the
/// compatible servers take `max_tokens`.
fn guess_max_tokens_field(base_url: &str) -> MaxTokensField {
    let host = base_url.split("://").nth(1).unwrap_or(base_url).split(['/', ':']).next().unwrap_or("");
    if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
        MaxTokensField::MaxCompletionTokens
    } else {
        MaxTokensField::MaxTokens
    }
}

impl AiConfig {
    /// Reads `AI_PROVIDER`, `AI_API_KEY`, `AI_BASE_URL`, `AI_MODEL`, the
    /// limits (`AI_*_TIMEOUT_SECS`, `AI_MAX_TOKENS`…), `AI_MAX_STEPS`,
    /// `AI_HISTORY_MESSAGES`, `AI_CONTEXT_TOKENS` and `MARGIN_PROMPTS_DIR`
    /// from `env`, checking each. With nothing set, the offline demo is used.
    pub fn read(env: &mut Env) -> Self {
        let api_key = env.secret("AI_API_KEY").map(ApiKey::new);
        let base_url = env.http_url("AI_BASE_URL");
        let named = env.choice("AI_PROVIDER", &["openai", "anthropic", "ollama", "openai-compatible", "demo"]);
        let provider = match named.and_then(ProviderKind::parse) {
            Some(kind) => kind,
            None if base_url.is_some() => ProviderKind::OpenAiCompatible,
            None if api_key.is_some() => ProviderKind::OpenAi,
            None => ProviderKind::Demo,
        };
        let base_url = base_url.unwrap_or_else(|| provider.default_base_url().to_string());
        let defaults = Limits::defaults(&base_url);
        let mut secs = |k: &str, d: Duration, max: u64| Duration::from_secs(env.number(k, d.as_secs(), 1, max, "seconds"));
        let connect_timeout = secs("AI_CONNECT_TIMEOUT_SECS", defaults.connect_timeout, 600);
        let first_byte_timeout = secs("AI_FIRST_BYTE_TIMEOUT_SECS", defaults.first_byte_timeout, 3600);
        let idle_timeout = secs("AI_IDLE_TIMEOUT_SECS", defaults.idle_timeout, 3600);
        let turn_timeout = secs("AI_TURN_TIMEOUT_SECS", defaults.turn_timeout, 86_400);
        let max_tokens = env.number("AI_MAX_TOKENS", DEFAULT_MAX_TOKENS, 1, 10_000_000, "tokens one model call may write");
        let max_tokens_field = match env.choice("AI_MAX_TOKENS_FIELD", &["max_tokens", "max_completion_tokens"]) {
            Some("max_completion_tokens") => MaxTokensField::MaxCompletionTokens,
            Some(_) => MaxTokensField::MaxTokens,
            None => defaults.max_tokens_field,
        };
        let limits = Limits { connect_timeout, first_byte_timeout, idle_timeout, turn_timeout, max_tokens: Some(max_tokens), max_tokens_field, ..defaults };
        let model = env.text("AI_MODEL").unwrap_or_else(|| provider.default_model().to_string());
        // Unset: the model's server is asked (`provider::window`), else the provider's usual window.
        let context_tokens = env.optional_number("AI_CONTEXT_TOKENS", 1_024u32, 10_000_000, "tokens");
        env.record("AI_PROVIDER (in effect)", provider.name());
        env.record("AI_BASE_URL (in effect)", base_url.clone());
        Self {
            provider,
            api_key,
            limits,
            base_url,
            model,
            max_steps: env.number("AI_MAX_STEPS", 10, 1, 50, "tool rounds a reply may take"),
            history_messages: env.number("AI_HISTORY_MESSAGES", 20, 1, 200, "messages"),
            context_tokens_said: context_tokens.is_some(),
            context_tokens: context_tokens.unwrap_or_else(|| default_window(provider)),
            prompts_dir: env.text("MARGIN_PROMPTS_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("prompts")),
        }
    }

    /// A configuration for the scripted model at `base_url` (tests and demo).
    pub fn scripted(base_url: impl Into<String>, prompts_dir: impl Into<PathBuf>) -> Self {
        let base_url = base_url.into();
        Self {
            provider: ProviderKind::Demo,
            api_key: None,
            limits: Limits::defaults(&base_url),
            base_url,
            model: ProviderKind::Demo.default_model().into(),
            max_steps: 10,
            history_messages: 20,
            context_tokens: default_window(ProviderKind::Demo),
            context_tokens_said: false,
            prompts_dir: prompts_dir.into(),
        }
    }

    /// What is missing before the agent can work, in words for the teacher or
    /// the administrator; `None` when it is ready.
    pub fn missing(&self) -> Option<String> {
        if self.provider.needs_key() && self.api_key.is_none() {
            return Some(format!(
                "No AI key is configured. Set AI_API_KEY (and AI_PROVIDER={}) in the server's environment and restart it, or unset AI_PROVIDER to use the offline demo.",
                self.provider.name()
            ));
        }
        if self.provider == ProviderKind::OpenAiCompatible && (self.base_url.is_empty() || self.model.is_empty()) {
            return Some("AI_PROVIDER=openai-compatible needs AI_BASE_URL (e.g. http://127.0.0.1:8000/v1) and AI_MODEL.".into());
        }
        None
    }

    pub fn is_demo(&self) -> bool {
        self.provider == ProviderKind::Demo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let mut c = AiConfig::scripted("http://x", "prompts");
        c.api_key = Some(ApiKey::new("sk-secret-123"));
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("[redacted]"));
    }

    #[test]
    fn missing_configuration_is_explained() {
        let mut c = AiConfig::scripted("", "prompts");
        assert_eq!(c.missing(), None);
        c.provider = ProviderKind::OpenAi;
        assert!(c.missing().unwrap().contains("AI_API_KEY"));
        c.api_key = Some(ApiKey::new("k"));
        assert_eq!(c.missing(), None);
        c.provider = ProviderKind::OpenAiCompatible;
        c.base_url.clear();
        assert!(c.missing().unwrap().contains("AI_BASE_URL"));
    }

    #[test]
    fn the_output_cap_field_follows_the_provider() {
        assert_eq!(guess_max_tokens_field("https://api.openai.com/v1"), MaxTokensField::MaxCompletionTokens);
        assert_eq!(guess_max_tokens_field("https://school.openai.azure.com/openai"), MaxTokensField::MaxCompletionTokens);
        assert_eq!(guess_max_tokens_field("http://127.0.0.1:11434/v1"), MaxTokensField::MaxTokens);
        assert_eq!(guess_max_tokens_field("https://api.deepseek.com"), MaxTokensField::MaxTokens);
    }

    #[test]
    fn provider_names_parse() {
        assert_eq!(ProviderKind::parse("Anthropic"), Some(ProviderKind::Anthropic));
        assert_eq!(ProviderKind::parse("openai-compatible"), Some(ProviderKind::OpenAiCompatible));
        assert_eq!(ProviderKind::parse("gemini"), None);
    }
}
