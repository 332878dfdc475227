//! The refusals that mean something Margin can say better than the
//! provider: a request too long for the model's context, and a step the
//! inference server could not read back from the model. Each server words
//! them its own way; the teacher gets one sentence for each, and the window
//! a refusal names is remembered so that the next request fits.
//!
//! The wordings, as each server sends them:
//! - OpenAI: code `context_length_exceeded`, "This model's maximum context
//!   length is N tokens. However, your messages resulted in M tokens…".
//! - vLLM (OpenAI's wording, in a body of its own or under `error`): "This
//!   model's maximum context length is N tokens. However, you requested…",
//!   or "…is longer than the maximum model length of N".
//! - llama.cpp's `llama-server`: type `exceed_context_size_error`, "request
//!   (M tokens) exceeds the available context size (N tokens), try
//!   increasing it", with `n_ctx`.
//! - Anthropic: "prompt is too long: M tokens > N maximum", or "input length
//!   and `max_tokens` exceed context limit: M + K > N".
//! - Ollama: "prompt too long; exceeded max context length by M tokens", or
//!   "input length exceeds the context length".

use super::{wire::ApiError, ProviderError};

/// What a refusal's words say the model's context is, if they say so.
pub struct Overflow {
    pub error: ProviderError,
    /// The model's context window, in tokens, when the refusal names it.
    pub window: Option<u32>,
}

/// Phrases that mean the request did not fit the model's context, in
/// lower case.
const TOO_LONG: &[&str] = &[
    "context_length_exceeded",
    "exceed_context_size",
    "maximum context length",
    "exceeds the available context size",
    "maximum model length",
    "prompt is too long",
    "exceed context limit",
    "exceeds the context length",
    "exceeded max context length",
    "context window",
];

/// Phrases of a server that could not read a tool call the model wrote
/// (llama.cpp's grammar and chat-template parsers, vLLM's tool parsers).
const CALL_UNREADABLE: &[&str] = &["does not match the expected", "failed to parse tool call", "error in extracting tool call", "tool call parser"];

/// The request was too long for the model, in the teacher's words, when
/// `api` (or the raw body it was read from) says so.
pub fn context_overflow(api: &ApiError) -> Option<Overflow> {
    let said = format!("{} {}", api.words(), api.message.to_ascii_lowercase());
    if !TOO_LONG.iter().any(|p| said.contains(p)) {
        return None;
    }
    let window = window_named(&said);
    let next = match window {
        Some(n) => format!(
            " (it reads at most {} tokens). Try again: Margin now sends it less of the conversation. If it happens again, start a new chat or split the lesson.",
            crate::chat::message::thousands(i64::from(n))
        ),
        None => ". Start a new chat or split the lesson, or ask whoever runs the server to give the model a larger context (and to set AI_CONTEXT_TOKENS to it).".into(),
    };
    let error = ProviderError::new("context_too_long", format!("The lesson and this conversation are longer than the model can read at once{next}"));
    Some(Overflow { error, window })
}

/// A request Margin did not send: its prompt alone fills the model's window.
pub fn too_long_here(window: u32) -> ProviderError {
    ProviderError::new(
        "context_too_long",
        format!(
            "The lesson and this conversation are longer than the model can read at once (it reads at most {} tokens). Start a new chat or split the lesson, or ask whoever runs the server for a model with a larger context.",
            crate::chat::message::thousands(i64::from(window))
        ),
    )
}

/// A step the model wrote that the inference server could not read.
pub fn call_unreadable(api: &ApiError) -> Option<ProviderError> {
    let said = api.message.to_ascii_lowercase();
    CALL_UNREADABLE.iter().any(|p| said.contains(p)).then(|| {
        ProviderError::new(
            "tool_call_unreadable",
            "The model wrote a step in a form the AI server could not read, so nothing was changed. Try again, or ask in other words; a larger model follows the steps' format more reliably.",
        )
    })
}

/// The window a refusal names: the number after "maximum context length
/// is", "context size (", "maximum model length of", "> … maximum" or
/// llama.cpp's `n_ctx`.
fn window_named(said: &str) -> Option<u32> {
    let after = |marker: &str| said.find(marker).and_then(|at| first_number(&said[at + marker.len()..]));
    after("maximum context length is")
        .or_else(|| after("available context size ("))
        .or_else(|| after("maximum model length of"))
        .or_else(|| after("\"n_ctx\":"))
        .or_else(|| {
            // Anthropic: "… > 200000 maximum".
            let end = said.find(" maximum")?;
            let start = said[..end].rfind('>')?;
            first_number(&said[start + 1..end])
        })
        .filter(|n| *n >= 256)
}

fn first_number(s: &str) -> Option<u32> {
    let s = s.trim_start();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn api(v: serde_json::Value) -> ApiError {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn every_servers_words_for_a_request_too_long_are_one_sentence_with_the_window_they_name() {
        let cases = [
            (
                api(json!({ "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "code": "context_length_exceeded" })),
                Some(128_000),
            ),
            (
                api(json!({ "message": "This model's maximum context length is 8192 tokens. However, you requested 16300 tokens (300 in the messages, 16000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "code": 400 })),
                Some(8_192),
            ),
            (api(json!({ "message": "The decoder prompt (length 9000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.", "type": "BadRequestError", "code": 400 })), Some(4_096)),
            (
                api(json!({ "message": "request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it", "type": "exceed_context_size_error", "code": 400 })),
                Some(8_192),
            ),
            (api(json!({ "message": "prompt is too long: 208000 tokens > 200000 maximum", "type": "invalid_request_error" })), Some(200_000)),
            (api(json!({ "message": "input length and `max_tokens` exceed context limit: 198000 + 21333 > 200000, decrease input length or `max_tokens` and try again", "type": "invalid_request_error" })), None),
            (api(json!({ "message": "prompt too long; exceeded max context length by 120 tokens" })), None),
        ];
        for (refusal, window) in cases {
            let o = context_overflow(&refusal).unwrap_or_else(|| panic!("not read as too long: {}", refusal.message));
            assert_eq!(o.error.code, "context_too_long");
            assert_eq!(o.window, window, "{}", refusal.message);
            assert!(!o.error.message.contains(&refusal.message), "the provider's words stay in the log");
            if let Some(n) = window {
                assert!(o.error.message.contains(&crate::chat::message::thousands(i64::from(n))), "{}", o.error.message);
            }
        }
        for other in [
            api(json!({ "message": "Invalid value for 'temperature'", "type": "invalid_request_error" })),
            api(json!({ "message": "You exceeded your current quota", "type": "insufficient_quota" })),
        ] {
            assert!(context_overflow(&other).is_none(), "{}", other.message);
        }
    }

    #[test]
    fn a_step_the_server_could_not_read_has_its_own_sentence() {
        let said = api(json!({ "message": "Failed to parse input at pos 42: the tool call does not match the expected format", "type": "server_error", "code": 500 }));
        let e = call_unreadable(&said).unwrap();
        assert_eq!(e.code, "tool_call_unreadable");
        assert!(e.message.contains("nothing was changed"));
        assert!(call_unreadable(&api(json!({ "message": "Upstream model overloaded" }))).is_none());
    }
}
