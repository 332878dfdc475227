use proptest::prelude::*;

use super::*;
use crate::chat::events::{DoneData, ToolEndData, ToolStatus};

/// What a reader makes of a batch: the text, the reasoning, and every other
/// event in order (documents left out: they are checked separately).
fn read(batch: &[(u64, ChatEvent)]) -> (String, String, Vec<String>) {
    let (mut text, mut reasoning, mut rest) = (String::new(), String::new(), Vec::new());
    for (_, e) in batch {
        match e {
            ChatEvent::Text(t) => text.push_str(&t.content),
            ChatEvent::Reasoning(t) => reasoning.push_str(&t.content),
            ChatEvent::ToolEnd(end) => rest.push(format!("tool_end {} {:?}", end.id, end.revision)),
            other => rest.push(other.name().to_string()),
        }
    }
    (text, reasoning, rest)
}

fn live_since(events: &[ChatEvent], after: u64) -> Vec<(u64, ChatEvent)> {
    events.iter().enumerate().skip(after as usize).map(|(i, e)| (i as u64 + 1, e.clone())).collect()
}

fn edit(id: &str, revision: i64) -> ChatEvent {
    ChatEvent::ToolEnd(Box::new(ToolEndData {
        document_xml: Some(format!("<lesson rev=\"{revision}\"/>")),
        revision: Some(revision),
        ..ToolEndData::bare(id.into(), ToolStatus::Success)
    }))
}

fn event() -> impl Strategy<Value = ChatEvent> {
    prop_oneof![
        4 => "[a-zé€ ]{0,6}".prop_map(ChatEvent::text),
        2 => "[a-z ]{0,6}".prop_map(|s| ChatEvent::Reasoning(TextData { content: s, round_index: 0 })),
        1 => (0i64..50).prop_map(|r| edit(&format!("call_{r}"), r)),
    ]
}

proptest! {
    #[test]
    fn a_reader_resuming_anywhere_reads_the_same_from_the_compacted_log(
        mut events in prop::collection::vec(event(), 0..40),
        after in 0u64..45,
    ) {
        events.push(ChatEvent::Done(DoneData::of("m")));
        let c = Compacted::new(events.clone());
        prop_assert!(c.is_finished());
        let live = live_since(&events, after);
        let compact = c.since(after);
        prop_assert_eq!(read(&compact), read(&live));
        // Numbers only move forward, and the last one is the same.
        prop_assert!(compact.windows(2).all(|w| w[0].0 < w[1].0));
        prop_assert_eq!(compact.last().map(|e| e.0), live.last().map(|e| e.0));
    }
}

#[test]
fn only_the_last_edit_keeps_its_document() {
    let events = vec![edit("a", 2), ChatEvent::text("x"), edit("b", 3), ChatEvent::Done(DoneData::of("m"))];
    let c = Compacted::new(events);
    let docs: Vec<Option<String>> = c
        .since(0)
        .into_iter()
        .filter_map(|(_, e)| match e {
            ChatEvent::ToolEnd(end) => Some(end.document_xml),
            _ => None,
        })
        .collect();
    assert_eq!(docs, vec![None, Some("<lesson rev=\"3\"/>".into())]);
}

#[test]
fn twenty_thousand_deltas_take_a_few_bytes_each() {
    let mut events: Vec<ChatEvent> = (0..20_000).map(|_| ChatEvent::text("abcde")).collect();
    events.push(ChatEvent::Done(DoneData::of("m")));
    let c = Compacted::new(events);
    // 100,000 bytes of text and four bytes a delta, not an event each.
    assert!(c.bytes < 200_000, "{}", c.bytes);
    assert_eq!(c.since(19_999), vec![(20_000, ChatEvent::text("abcde")), (20_001, ChatEvent::Done(DoneData::of("m")))]);
}

#[test]
fn a_batch_keeps_its_numbers_through_storage() {
    let events = vec![ChatEvent::text("Hel"), ChatEvent::text("lo"), edit("c1", 3), ChatEvent::text(" there"), ChatEvent::Done(DoneData::of("m"))];
    let batch = Compacted::starting_at(41, events);
    assert_eq!(batch.last(), Some(45));
    let back = Compacted::from_json(&batch.to_json()).unwrap();
    assert_eq!(back.last(), Some(45));
    assert!(back.is_finished());
    // A reader in the middle of the first run gets exactly the rest of it.
    let rest = back.since(41);
    assert_eq!(rest.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![42, 43, 44, 45]);
    assert_eq!(read(&rest).0, "lo there");
    assert!(Compacted::from_json(r#"[{"r":false,"f":1,"t":"é","n":[1]}]"#).is_err(), "an end inside a character");
    assert!(Compacted::from_json(r#"[{"s":1,"e":"nonsense","d":"{}"}]"#).is_err());
}
