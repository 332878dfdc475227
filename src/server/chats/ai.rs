//! The assistant as the server holds it: the configured provider, the agent
//! built from the prompts, and, for the offline demo, the scripted model
//! running inside this process. When something is missing the app still runs
//! and says exactly what to configure.

use std::sync::Arc;

pub use crate::chat::message::AiStatus;
use crate::server::error::AppError;
use crate::{
    agent::{config::AiConfig, run::Agent},
    scripted::ScriptedLlm,
};

pub struct AiRuntime {
    config: AiConfig,
    agent: Option<Arc<Agent>>,
    /// The students' tutor, on the same provider.
    tutor: Option<Arc<Agent>>,
    /// The teacher's agent with the tools of drafting feedback ("Draft
    /// feedback" turns only: other requests do not carry their definitions).
    feedback: Option<Arc<Agent>>,
    /// Why there is no agent, in words for the teacher and the administrator.
    unavailable: Option<String>,
    /// Kept alive for as long as the demo is in use.
    _demo: Option<ScriptedLlm>,
}

impl AiRuntime {
    /// Starts the demo model if it is the one configured, then builds the
    /// agent; unless `AI_CONTEXT_TOKENS` says, the model's window is then
    /// asked of its server (`provider::window`), without holding the start.
    pub async fn start(mut config: AiConfig) -> Self {
        let mut demo = None;
        if config.is_demo() && config.base_url.is_empty() {
            match ScriptedLlm::start().await {
                Ok(llm) => {
                    config.base_url = llm.base_url.clone();
                    demo = Some(llm);
                }
                Err(e) => {
                    return Self::without(config, format!("The offline demo model could not start: {e}"));
                }
            }
        }
        let runtime = Self::build(config, demo);
        if let Some(agent) = runtime.agent.clone().filter(|_| !runtime.config.context_tokens_said && !runtime.config.is_demo()) {
            tokio::spawn(async move { agent.read_window().await });
        }
        runtime
    }

    /// An agent talking to an already running scripted model (tests).
    pub fn with_scripted(config: AiConfig, llm: ScriptedLlm) -> Self {
        Self::build(config, Some(llm))
    }

    fn build(config: AiConfig, demo: Option<ScriptedLlm>) -> Self {
        if let Some(missing) = config.missing() {
            return Self { config, agent: None, tutor: None, feedback: None, unavailable: Some(missing), _demo: demo };
        }
        let agents = Agent::new(&config).and_then(|agent| {
            let tutor = Agent::tutor(&config)?.sharing_window_of(&agent);
            let feedback = Agent::feedback(&config)?.sharing_window_of(&agent);
            Ok((agent, tutor, feedback))
        });
        match agents {
            Ok((agent, tutor, feedback)) => {
                tracing::info!(provider = config.provider.name(), model = %config.model, demo = config.is_demo(), "assistant ready");
                Self { config, agent: Some(Arc::new(agent)), tutor: Some(Arc::new(tutor)), feedback: Some(Arc::new(feedback)), unavailable: None, _demo: demo }
            }
            Err(e) => {
                tracing::error!(error = %e, "the assistant's prompts could not be loaded");
                Self::without(config, format!("The assistant's prompts could not be loaded ({e}). Check MARGIN_PROMPTS_DIR."))
            }
        }
    }

    fn without(config: AiConfig, why: String) -> Self {
        Self { config, agent: None, tutor: None, feedback: None, unavailable: Some(why), _demo: None }
    }

    pub fn config(&self) -> &AiConfig {
        &self.config
    }

    /// The agent, or why there is none (a 503 that says what to configure).
    pub fn agent(&self) -> Result<Arc<Agent>, AppError> {
        self.agent.clone().ok_or_else(|| {
            AppError::Unavailable(self.unavailable.clone().unwrap_or_else(|| "The assistant is not configured.".into()))
        })
    }

    /// The agent that drafts feedback, or why there is none.
    pub fn feedback_agent(&self) -> Result<Arc<Agent>, AppError> {
        self.feedback.clone().ok_or_else(|| {
            AppError::Unavailable(self.unavailable.clone().unwrap_or_else(|| "The assistant is not configured.".into()))
        })
    }

    /// The students' tutor, or why there is none.
    pub fn tutor(&self) -> Result<Arc<Agent>, AppError> {
        self.tutor.clone().ok_or_else(|| {
            AppError::Unavailable(self.unavailable.clone().unwrap_or_else(|| "The tutor is not configured.".into()))
        })
    }

    /// The scripted model, when it is the one in use.
    pub fn scripted(&self) -> Option<&ScriptedLlm> {
        self._demo.as_ref()
    }

    pub fn status(&self) -> AiStatus {
        AiStatus {
            provider: self.config.provider.name().into(),
            model: self.config.model.clone(),
            demo: self.config.is_demo(),
            ready: self.agent.is_some(),
            message: self.unavailable.clone(),
            role: String::new(),
            usage: None,
            meter: None,
            blocked: None,
        }
    }
}
