//! Which AI provider to talk to, read from the environment. The API key is
//! wrapped so that it never shows up in logs, debug output or responses.

use std::{env, fmt, path::PathBuf};

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
    /// Where `chat/base.md` and `chat/skills/*.md` live.
    pub prompts_dir: PathBuf,
}

impl AiConfig {
    /// Reads `AI_PROVIDER`, `AI_API_KEY`, `AI_BASE_URL`, `AI_MODEL`,
    /// `AI_MAX_STEPS`, `AI_HISTORY_MESSAGES` and `MARGIN_PROMPTS_DIR`. With
    /// nothing set, the offline demo is used.
    pub fn from_env() -> Self {
        let var = |k: &str| env::var(k).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let api_key = var("AI_API_KEY").map(ApiKey::new);
        let base_url = var("AI_BASE_URL");
        let provider = match var("AI_PROVIDER").as_deref().map(ProviderKind::parse) {
            Some(Some(kind)) => kind,
            Some(None) => {
                tracing::warn!("AI_PROVIDER is not one of openai, anthropic, ollama, openai-compatible, demo; using the demo");
                ProviderKind::Demo
            }
            None if base_url.is_some() => ProviderKind::OpenAiCompatible,
            None if api_key.is_some() => ProviderKind::OpenAi,
            None => ProviderKind::Demo,
        };
        let number = |k: &str, default: u64| var(k).and_then(|v| v.parse::<u64>().ok()).filter(|n| *n > 0).unwrap_or(default);
        Self {
            provider,
            api_key,
            base_url: base_url.unwrap_or_else(|| provider.default_base_url().to_string()),
            model: var("AI_MODEL").unwrap_or_else(|| provider.default_model().to_string()),
            max_steps: number("AI_MAX_STEPS", 10).min(50) as u32,
            history_messages: number("AI_HISTORY_MESSAGES", 20).min(200) as usize,
            prompts_dir: var("MARGIN_PROMPTS_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("prompts")),
        }
    }

    /// A configuration for the scripted model at `base_url` (tests and demo).
    pub fn scripted(base_url: impl Into<String>, prompts_dir: impl Into<PathBuf>) -> Self {
        Self {
            provider: ProviderKind::Demo,
            api_key: None,
            base_url: base_url.into(),
            model: ProviderKind::Demo.default_model().into(),
            max_steps: 10,
            history_messages: 20,
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
    fn provider_names_parse() {
        assert_eq!(ProviderKind::parse("Anthropic"), Some(ProviderKind::Anthropic));
        assert_eq!(ProviderKind::parse("openai-compatible"), Some(ProviderKind::OpenAiCompatible));
        assert_eq!(ProviderKind::parse("gemini"), None);
    }
}
