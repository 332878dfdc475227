//! One model call with no tools and no lesson: a system prompt, one message,
//! the reply's text. For a short judgement beside a turn (the safety check's
//! second opinion, `server::safety::opinion`), metered like every call.

use async_openai::types::chat::{ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage, ChatCompletionRequestUserMessage};

use super::Agent;
use crate::agent::{
    meter::{estimate_tokens, CallOutcome, CallUsage, Meter},
    provider::{wire::SentMessage, ProviderError},
};

/// The most a judgement may write, in bytes: it is a word or two.
const MOST_BYTES: usize = 2_000;

impl Agent {
    /// Asks the model once: `system`, then `message`; returns its text.
    pub async fn ask_once(&self, system: &str, message: &str, meter: &dyn Meter) -> Result<String, ProviderError> {
        let messages = [
            ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage::from(system)),
            ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage::from(message)),
        ];
        let sent: Vec<SentMessage<'_>> = messages.iter().map(SentMessage::from).collect();
        let body = self.provider.request_body(&sent, &[])?;
        let prompt_bytes = body.len();
        meter.reserve(estimate_tokens(prompt_bytes).saturating_add(self.max_output())).await?;
        let mut usage = None;
        let mut text = String::new();
        let result = async {
            let mut stream = self.provider.send(body).await?;
            while let Some(chunk) = stream.next().await? {
                if let Some(u) = chunk.usage {
                    usage = Some(u);
                }
                for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
                    if let Some(t) = choice.delta.content {
                        text.push_str(&t);
                        if text.len() > MOST_BYTES {
                            return Err(ProviderError::new("too_long", "The model's judgement was too long."));
                        }
                    }
                }
            }
            Ok(())
        }
        .await;
        let outcome = if result.is_ok() { CallOutcome::Complete } else { CallOutcome::Failed };
        let used = match usage {
            Some(u) => CallUsage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, estimated: false, outcome },
            None if text.is_empty() => CallUsage { prompt_tokens: 0, completion_tokens: 0, estimated: false, outcome },
            None => CallUsage {
                prompt_tokens: u32::try_from(prompt_bytes / 4).unwrap_or(u32::MAX),
                completion_tokens: u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX),
                estimated: true,
                outcome,
            },
        };
        meter.settle(used).await;
        result.map(|()| text)
    }
}
