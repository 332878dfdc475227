//! The chat-completions wire format, as Margin sends and reads it. Requests
//! reuse async-openai's message and tool types; the streamed chunks are read
//! into Margin's own types, because providers put more in them than the
//! library keeps: an `{"error": …}` object in the middle of a stream, and the
//! model's reasoning (`reasoning_content` from DeepSeek and vLLM, `reasoning`
//! from OpenRouter and Ollama).
//!
//! One struct per chunk, every field optional: a chunk is read in one pass
//! (no untagged enum that parses it twice), whatever the provider leaves out.

use async_openai::types::chat::{ChatCompletionRequestMessage, ChatCompletionTools};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which field carries the cap on a model call's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxTokensField {
    /// OpenAI and Azure: `max_completion_tokens` (their reasoning models refuse `max_tokens`).
    MaxCompletionTokens,
    /// Everyone else (vLLM, Ollama, DeepSeek, OpenRouter, Anthropic's compatible endpoint).
    MaxTokens,
}

/// A message as sent: async-openai's message, plus the reasoning that led
/// to it where the provider wants that back (DeepSeek, when the model called
/// tools in the same turn).
#[derive(Serialize)]
pub struct SentMessage<'a> {
    #[serde(flatten)]
    pub message: &'a ChatCompletionRequestMessage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<&'a str>,
}

impl<'a> From<&'a ChatCompletionRequestMessage> for SentMessage<'a> {
    fn from(message: &'a ChatCompletionRequestMessage) -> Self {
        Self { message, reasoning_content: None }
    }
}

/// The body of one streamed model call.
#[derive(Serialize)]
pub struct CompletionRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [SentMessage<'a>],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub tools: &'a [ChatCompletionTools],
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
}

#[derive(Serialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}

impl<'a> CompletionRequest<'a> {
    pub fn new(
        model: &'a str,
        messages: &'a [SentMessage<'a>],
        tools: &'a [ChatCompletionTools],
        cap: Option<(u32, MaxTokensField)>,
    ) -> Self {
        let (max_tokens, max_completion_tokens) = match cap {
            Some((n, MaxTokensField::MaxTokens)) => (Some(n), None),
            Some((n, MaxTokensField::MaxCompletionTokens)) => (None, Some(n)),
            None => (None, None),
        };
        Self {
            model,
            messages,
            tools,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            max_tokens,
            max_completion_tokens,
        }
    }
}

/// One `data:` line of the stream: a chunk, or an error the provider sent
/// instead of (or after) one.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Chunk {
    pub choices: Vec<Choice>,
    pub usage: Option<Usage>,
    pub error: Option<ApiError>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Choice {
    pub index: u32,
    pub delta: Delta,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta {
    pub content: Option<String>,
    /// DeepSeek and vLLM.
    pub reasoning_content: Option<String>,
    /// OpenRouter and Ollama.
    pub reasoning: Option<String>,
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

impl Delta {
    /// The reasoning in this delta, whichever field the provider uses.
    pub fn reasoning(&self) -> Option<&str> {
        self.reasoning_content.as_deref().or(self.reasoning.as_deref()).filter(|s| !s.is_empty())
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolCallDelta {
    pub index: u32,
    pub id: Option<String>,
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FunctionDelta {
    pub name: Option<String>,
    pub arguments: Option<String>,
}

/// Token counts. Some providers send them in several chunks, each time the
/// running total: the last one seen in a call is the call's.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

/// An error object, as sent in an error response's body or mid-stream.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ApiError {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A string for OpenAI ("insufficient_quota"), a number for some others (502).
    pub code: Option<Value>,
}

impl ApiError {
    /// The type and code in lower case, to look for known words in.
    pub fn words(&self) -> String {
        let code = match &self.code {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        format!("{} {code}", self.kind.as_deref().unwrap_or("")).to_ascii_lowercase()
    }

    /// A numeric code, if the provider gave one (OpenRouter gives HTTP statuses).
    pub fn status(&self) -> Option<u16> {
        match &self.code {
            Some(Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
            Some(Value::String(s)) => s.parse().ok(),
            _ => None,
        }
    }
}

/// The body of an error response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    pub error: Option<ApiError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_every_shape_are_read() {
        let c: Chunk = serde_json::from_str(r#"{"id":"x","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}"#).unwrap();
        assert_eq!(c.choices[0].delta.content.as_deref(), Some("Hi"));
        let c: Chunk = serde_json::from_str(r#"{"choices":[{"delta":{"reasoning_content":"Hmm"}}]}"#).unwrap();
        assert_eq!(c.choices[0].delta.reasoning(), Some("Hmm"));
        let c: Chunk = serde_json::from_str(r#"{"choices":[{"delta":{"reasoning":"Well"}}]}"#).unwrap();
        assert_eq!(c.choices[0].delta.reasoning(), Some("Well"));
        let c: Chunk = serde_json::from_str(r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#).unwrap();
        assert_eq!(c.usage.unwrap().total_tokens, 7);
        let c: Chunk = serde_json::from_str(r#"{"error":{"message":"Overloaded","type":"server_error","code":502}}"#).unwrap();
        let e = c.error.unwrap();
        assert_eq!((e.status(), e.message.as_str()), (Some(502), "Overloaded"));
        assert!(e.words().contains("server_error"));
    }

    #[test]
    fn reasoning_rides_along_only_where_it_is_given() {
        use async_openai::types::chat::{ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent};
        let m = ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
            content: Some(ChatCompletionRequestAssistantMessageContent::Text("Hi".into())),
            ..Default::default()
        });
        let plain = serde_json::to_value(SentMessage::from(&m)).unwrap();
        assert_eq!(plain["role"], "assistant");
        assert_eq!(plain["content"], "Hi");
        assert!(plain.get("reasoning_content").is_none());
        let with = serde_json::to_value(SentMessage { message: &m, reasoning_content: Some("Because") }).unwrap();
        assert_eq!((with["role"].as_str(), with["reasoning_content"].as_str()), (Some("assistant"), Some("Because")));
    }

    #[test]
    fn the_output_cap_goes_in_the_field_the_provider_reads() {
        let r = CompletionRequest::new("m", &[], &[], Some((100, MaxTokensField::MaxCompletionTokens)));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["max_completion_tokens"], 100);
        assert!(v.get("max_tokens").is_none() && v.get("tools").is_none());
        let v = serde_json::to_value(CompletionRequest::new("m", &[], &[], Some((50, MaxTokensField::MaxTokens)))).unwrap();
        assert_eq!(v["max_tokens"], 50);
        assert_eq!(v["stream_options"]["include_usage"], true);
    }
}
