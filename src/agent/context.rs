//! What fits in the model's context window (`AI_CONTEXT_TOKENS`). The system
//! prompt with the lesson, the tool definitions, the question and room for
//! the reply come first and are never cut: a lesson too large for the window
//! is a clear error before any call, rather than the provider's 400. The
//! earlier conversation gets what is left. Long old replies are shortened
//! before anything is dropped, then the oldest messages go first, so the
//! newest always stay.
//!
//! Tokens are estimated from bytes, by provider family (a tokenizer per model
//! would be exact, and heavy, for what is a safety margin).

use super::{config::ProviderKind, prompt::PastMessage, provider::ProviderError};

/// Bytes per token, roughly, for a provider's models: OpenAI's tokenizers
/// average about four bytes of English a token; Anthropic's and the open
/// models' fewer.
pub fn bytes_per_token(kind: ProviderKind) -> f64 {
    match kind {
        ProviderKind::OpenAi | ProviderKind::Demo => 4.0,
        ProviderKind::Anthropic | ProviderKind::Ollama | ProviderKind::OpenAiCompatible => 3.5,
    }
}

/// A reply older than the newest two messages is cut to this many tokens
/// before any message is dropped.
const SHORTENED_REPLY_TOKENS: usize = 300;
const SHORTENED: &str = " … (shortened)";

pub struct Budget {
    pub window: u32,
    pub bytes_per_token: f64,
}

impl Budget {
    pub fn tokens(&self, bytes: usize) -> usize {
        (bytes as f64 / self.bytes_per_token).ceil() as usize
    }

    /// Fits `history` (oldest first) beside `fixed_bytes` (the system prompt
    /// with the lesson, the tool definitions and the question) and
    /// `reply_tokens` of room for the answer. Err: the fixed part alone does
    /// not fit.
    pub fn fit(&self, mut history: Vec<PastMessage>, fixed_bytes: usize, reply_tokens: u32) -> Result<Vec<PastMessage>, ProviderError> {
        let fixed = self.tokens(fixed_bytes) + reply_tokens as usize;
        let window = self.window as usize;
        if fixed > window {
            return Err(ProviderError::new(
                "context_too_long",
                format!(
                    "This lesson is too long for the model to read in one go (about {} tokens with the question, where the model takes {}). Split it into shorter lessons, or use a model with a larger context (AI_CONTEXT_TOKENS).",
                    fixed - reply_tokens as usize,
                    window.saturating_sub(reply_tokens as usize)
                ),
            ));
        }
        let room = window - fixed;
        let size = |m: &PastMessage| match m {
            PastMessage::User(t) | PastMessage::Assistant(t) => self.tokens(t.len()),
        };
        let mut used: usize = history.iter().map(size).sum();
        // Long old replies first, oldest first; the last exchange is kept whole.
        let keep_whole = history.len().saturating_sub(2);
        let cut_bytes = (SHORTENED_REPLY_TOKENS as f64 * self.bytes_per_token) as usize;
        for m in history.iter_mut().take(keep_whole) {
            if used <= room {
                break;
            }
            if let PastMessage::Assistant(t) = m {
                if self.tokens(t.len()) > SHORTENED_REPLY_TOKENS {
                    let before = self.tokens(t.len());
                    let mut end = cut_bytes.min(t.len());
                    while !t.is_char_boundary(end) {
                        end -= 1;
                    }
                    t.truncate(end);
                    t.push_str(SHORTENED);
                    used = used - before + self.tokens(t.len());
                }
            }
        }
        // Then the oldest messages, until the rest fits.
        let mut drop = 0;
        while used > room && drop < history.len() {
            used -= size(&history[drop]);
            drop += 1;
        }
        history.drain(..drop);
        Ok(history)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(window: u32) -> Budget {
        Budget { window, bytes_per_token: 4.0 }
    }

    fn words(n: usize) -> String {
        "word ".repeat(n)
    }

    #[test]
    fn what_fits_is_left_alone() {
        let history = vec![PastMessage::User("hi".into()), PastMessage::Assistant("hello".into())];
        assert_eq!(budget(10_000).fit(history.clone(), 400, 1_000).unwrap(), history);
    }

    #[test]
    fn long_old_replies_are_shortened_before_anything_is_dropped() {
        let long = words(2_000); // 10,000 bytes: 2,500 tokens
        let history = vec![
            PastMessage::User("first question".into()),
            PastMessage::Assistant(long.clone()),
            PastMessage::User("second question".into()),
            PastMessage::Assistant("short answer".into()),
        ];
        // Room for about 1,000 tokens of history.
        let fitted = budget(3_000).fit(history, 4_000, 1_000).unwrap();
        assert_eq!(fitted.len(), 4, "nothing dropped: {fitted:?}");
        let PastMessage::Assistant(cut) = &fitted[1] else { panic!() };
        assert!(cut.ends_with(SHORTENED) && cut.len() < 1_300, "{} bytes", cut.len());
        assert_eq!(fitted[3], PastMessage::Assistant("short answer".into()));
    }

    #[test]
    fn the_oldest_go_first_and_the_newest_stay() {
        let history: Vec<PastMessage> = (0..40)
            .map(|i| if i % 2 == 0 { PastMessage::User(format!("question {i} {}", words(40))) } else { PastMessage::Assistant(format!("answer {i} {}", words(40))) })
            .collect();
        let fitted = budget(2_000).fit(history.clone(), 400, 1_000).unwrap();
        assert!(!fitted.is_empty() && fitted.len() < 40);
        assert_eq!(fitted.last(), history.last(), "the newest message stays");
        assert_eq!(fitted[..], history[40 - fitted.len()..], "what stays is the newest, in order");
        let total: usize = fitted.iter().map(|m| match m { PastMessage::User(t) | PastMessage::Assistant(t) => t.len() / 4 + 1 }).sum();
        assert!(total <= 2_000 - 100 - 1_000, "{total} tokens of history");
    }

    #[test]
    fn a_lesson_too_long_for_the_window_is_a_clear_error() {
        let e = budget(8_192).fit(Vec::new(), 40_000, 1_000).unwrap_err();
        assert_eq!(e.code, "context_too_long");
        assert!(e.message.contains("too long for the model"), "{}", e.message);
    }
}
