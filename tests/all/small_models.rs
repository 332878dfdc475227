//! What a small model does that the teacher must be told, against the
//! scripted model: a reply that writes about a change and makes none ends
//! saying the lesson was not changed; a reply of nothing (or of thinking
//! only) is a failure to retry, not an empty bubble.
#![cfg(feature = "ssr")]

use crate::agent_run::{prompts, run_turn, Memory, START};
use margin::{
    agent::{config::AiConfig, run::{unchanged::NOT_CHANGED, TurnOutcome}, tools::DocumentStore},
    chat::events::ChatEvent,
    scripted::ScriptedLlm,
};

async fn said(message: &str) -> crate::agent_run::Run {
    let llm = ScriptedLlm::start().await.unwrap();
    let config = AiConfig::scripted(llm.base_url.clone(), prompts());
    run_turn(llm, config, Memory::with(START), Vec::new(), message).await
}

fn streamed(events: &[ChatEvent]) -> String {
    events.iter().filter_map(|e| if let ChatEvent::Text(t) = e { Some(t.content.as_str()) } else { None }).collect()
}

#[tokio::test]
async fn a_reply_that_writes_about_a_change_and_makes_none_says_the_lesson_was_not_changed() {
    let r = said("Add a quiz on the water cycle; talk about it instead").await;
    assert!(matches!(r.result.outcome, TurnOutcome::Complete), "{:?}", r.result.outcome);
    assert!(r.result.record.text.ends_with(NOT_CHANGED), "the record says so: {}", r.result.record.text);
    assert!(streamed(&r.events).ends_with(NOT_CHANGED), "and the stream");
    assert_eq!(r.doc.current(), START, "nothing changed indeed");
}

#[tokio::test]
async fn a_reply_that_makes_the_change_or_answers_a_question_says_nothing_more() {
    let r = said("Add a fill-in-the-blank exercise about French verbs").await;
    assert!(matches!(r.result.outcome, TurnOutcome::Complete), "{:?}", r.result.outcome);
    assert_ne!(r.doc.current(), START);
    assert!(!r.result.record.text.contains(NOT_CHANGED), "{}", r.result.record.text);
    let r = said("What types of exercises can you create?").await;
    assert!(!r.result.record.text.contains(NOT_CHANGED), "{}", r.result.record.text);
}

#[tokio::test]
async fn a_reply_that_only_thinks_is_a_failure_that_says_why() {
    let r = said("Add an exercise, but only think").await;
    let TurnOutcome::Failed(e) = &r.result.outcome else { panic!("expected a failure, got {:?}", r.result.outcome) };
    assert_eq!(e.code, "empty_reply");
    assert!(e.message.contains("thought about it but wrote no answer"), "{}", e.message);
    assert!(!r.result.record.reasoning.is_empty(), "its thinking is kept");
}
