//! What a finished turn did not do, said plainly. A small model asked to
//! add an exercise often writes "I'll add a multiple-choice exercise: …"
//! and calls nothing; the reply reads as if the lesson changed. A turn that
//! ends without an edit, where the teacher asked for one or the reply says
//! it made one, ends with a line saying the lesson was not changed; a turn
//! with nothing to show at all (no text, no step: a model that only
//! thought, or sent nothing) ends as a failure the teacher can retry.
//!
//! Whether the teacher asked for a change is read from their words: the
//! verbs of a request, at the start or after "please", "can you"… (English,
//! kept as data here). A question ("What can you create?") is not a request.

use crate::{
    agent::provider::ProviderError,
    chat::{events::ToolStatus, turn::TurnRecord},
};

/// The tools whose success (or held proposal) is a change made.
const CHANGES: &[&str] = &["edit_document", "create_lesson", "draft_feedback"];

/// The verbs of a request to change a lesson.
const VERBS: &[&str] = &[
    "add", "adapt", "append", "change", "convert", "correct", "create", "delete", "differentiate", "edit", "expand", "fix", "generate", "improve",
    "include", "insert", "lengthen", "make", "merge", "move", "put", "remove", "rephrase", "replace", "reword", "rewrite", "shorten", "simplify", "split",
    "swap", "translate", "turn", "update", "write",
];

/// What may come before the verb of a request.
const LEADS: &[&[&str]] = &[
    &["please"],
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
    &["can", "we"],
    &["i", "want", "you", "to"],
    &["i", "want", "to"],
    &["i'd", "like", "you", "to"],
    &["i'd", "like", "to"],
    &["let's"],
    &["now"],
    &["also"],
    &["then"],
];

/// What a reply says when it claims a change it did not make: past tense
/// only ("I'll add one" is an offer, answered by the teacher's next word).
const CLAIMS: &[&str] = &[
    "i added", "i've added", "i have added", "i changed", "i've changed", "i have changed", "i updated", "i've updated", "i replaced", "i've replaced",
    "i removed", "i've removed", "i rewrote", "i've rewritten", "i created", "i've created", "i inserted", "i've inserted",
];

/// The line a reply ends with when the lesson was not changed.
pub const NOT_CHANGED: &str = "(No change was made to the lesson.)";

/// Whether the teacher's message asks for a change.
pub fn asks_for_change(said: &str) -> bool {
    let words: Vec<String> = said
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let mut at = 0;
    // Past what may lead a request ("please can you…"), then the verb.
    'leads: loop {
        for lead in LEADS {
            if words.len() >= at + lead.len() && words[at..at + lead.len()].iter().zip(lead.iter()).all(|(w, l)| w == l) {
                at += lead.len();
                continue 'leads;
            }
        }
        break;
    }
    words.get(at).is_some_and(|w| VERBS.contains(&w.as_str()))
}

/// Whether the turn changed anything (or holds a change for review).
pub fn changed(record: &TurnRecord) -> bool {
    record.tool_calls.iter().any(|c| CHANGES.contains(&c.call.tool.as_str()) && matches!(c.status, ToolStatus::Success | ToolStatus::Proposed))
}

/// Whether the reply says it changed the lesson.
fn claims_change(text: &str) -> bool {
    let text = text.to_lowercase().replace('’', "'");
    CLAIMS.iter().any(|c| text.contains(c))
}

/// A finished turn with nothing to show: why, for the teacher.
pub fn empty(record: &TurnRecord) -> Option<ProviderError> {
    if !record.text.trim().is_empty() || !record.tool_calls.is_empty() {
        return None;
    }
    let why = if record.reasoning.trim().is_empty() {
        "The model sent back an empty reply."
    } else {
        "The model thought about it but wrote no answer."
    };
    Some(ProviderError::new("empty_reply", format!("{why} Try again, or ask in other words.")))
}

/// Whether a finished turn should end with `NOT_CHANGED`.
pub fn should_say_unchanged(record: &TurnRecord, said: &str) -> bool {
    !changed(record) && (asks_for_change(said) || claims_change(&record.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_told_from_questions() {
        for request in [
            "Add a fill-in-the-blank exercise about French verbs",
            "please add three questions",
            "Can you add an exercise?",
            "Could you please rewrite the intro",
            "I'd like you to simplify the second paragraph.",
            "Now translate it into Spanish",
            "make it shorter",
        ] {
            assert!(asks_for_change(request), "{request}");
        }
        for question in ["What types of exercises can you create?", "Hello", "test", "How long is this lesson?", "Is the second exercise too hard?", "Thanks!"] {
            assert!(!asks_for_change(question), "{question}");
        }
    }

    #[test]
    fn a_reply_that_claims_a_change_it_did_not_make_is_told_apart() {
        let record = TurnRecord { text: "I’ve added a multiple-choice exercise: 1. What is …".into(), ..TurnRecord::default() };
        assert!(should_say_unchanged(&record, "Hello there"));
        let offer = TurnRecord { text: "Tell me the topic and the kind, and I'll add one.".into(), ..TurnRecord::default() };
        assert!(!should_say_unchanged(&offer, "What can you do?"));
        let plain = TurnRecord { text: "Hello! How can I help with this lesson?".into(), ..TurnRecord::default() };
        assert!(!should_say_unchanged(&plain, "Hello there"));
    }

    #[test]
    fn a_reply_with_nothing_to_show_is_a_failure_that_says_why() {
        let thought = TurnRecord { reasoning: "Let me think about verbs…".into(), ..TurnRecord::default() };
        let e = empty(&thought).unwrap();
        assert_eq!(e.code, "empty_reply");
        assert!(e.message.contains("thought"));
        assert_eq!(empty(&TurnRecord::default()).unwrap().code, "empty_reply");
        assert!(empty(&TurnRecord { text: "Hi".into(), ..TurnRecord::default() }).is_none());
    }
}
