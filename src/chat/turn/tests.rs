use super::*;
use crate::chat::events::{ToolArgs, UsageData};

fn start(id: &str, tool: &str, args: &str, label: &str) -> ChatEvent {
    ChatEvent::ToolStart(Box::new(ToolStartData {
        id: id.into(),
        tool: tool.into(),
        args: ToolArgs::from_model(args),
        display_text: label.into(),
        round_index: 1,
    }))
}

fn end(id: &str, status: ToolStatus, summary: Option<&str>, document: Option<&str>) -> ChatEvent {
    ChatEvent::ToolEnd(Box::new(ToolEndData {
        error: (status == ToolStatus::Error).then(|| "bad".to_string()),
        summary: summary.map(str::to_string),
        document_xml: document.map(str::to_string),
        revision: document.map(|_| 2),
        ..ToolEndData::bare(id.into(), status)
    }))
}

fn live() -> Vec<ChatEvent> {
    vec![
        start("a", "load_skill", r#"{"skill":"fill-blanks"}"#, "Checking fill-blanks rules"),
        end("a", ToolStatus::Success, None, None),
        ChatEvent::RoundFinished(crate::chat::events::RoundData { round: 1, finish_reason: "tool_calls".into() }),
        start("b", "edit_document", "{}", "Editing document"),
        start("b", "edit_document", r#"{"summary":"Added"}"#, "Editing document"),
        end("b", ToolStatus::Success, Some("Added"), Some("<lesson/>")),
        ChatEvent::text("Done "),
        ChatEvent::text("it."),
        ChatEvent::Usage(UsageData { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }),
        ChatEvent::Done(DoneData::of("m1")),
    ]
}

#[test]
fn a_record_folds_events_and_gives_them_back() {
    let mut r = TurnRecord::default();
    for e in &live() {
        r.apply(e);
    }
    assert_eq!(r.text, "Done it.");
    assert_eq!(r.tool_calls.len(), 2, "an early announcement and the full one are one step");
    assert_eq!(r.tool_calls[1].args.json(), r#"{"summary":"Added"}"#);
    assert_eq!(r.tool_calls[1].summary.as_deref(), Some("Added"));
    assert_eq!(r.document_xml.as_deref(), Some("<lesson/>"));
    assert_eq!((r.status, r.usage.total_tokens), (MessageStatus::Complete, 7));

    // Replaying the record's events builds the same record.
    let mut again = TurnRecord { usage: r.usage, ..TurnRecord::default() };
    for e in &r.events("m1") {
        again.apply(e);
    }
    // Documents and the revisions they were saved as are the replayer's
    // to add (only while the document is still the lesson's).
    let mut expected = TurnRecord { document_xml: None, ..r.clone() };
    expected.tool_calls.iter_mut().for_each(|c| c.revision = None);
    assert_eq!(again, expected);
    // The last is `done`, carrying the record whole as its `final`.
    let Some(ChatEvent::Done(done)) = r.events("m1").last().cloned() else { panic!("done last") };
    assert_eq!(done.message_id, "m1");
    assert_eq!(done.record.as_deref(), Some(&r.final_record()));
    assert_eq!(done.record.unwrap().steps, r.tool_calls);
}

#[test]
fn steps_still_running_at_the_end_did_not_finish() {
    let mut r = TurnRecord::default();
    r.apply(&start("a", "edit_document", "{}", "Editing document"));
    assert!(r.tool_calls[0].is_running());
    assert_eq!(r.events("m").len(), 1, "a running step has no end, a running turn no last event");
    r.apply(&ChatEvent::error(INTERRUPTED, "The server restarted."));
    assert_eq!(r.status, MessageStatus::Interrupted);
    assert_eq!(r.tool_calls[0].status, ToolStatus::Error);
    assert_eq!(r.tool_calls[0].error.as_deref(), Some(DID_NOT_FINISH));
}

#[test]
fn final_statuses_read_as_one_last_event() {
    let e = |status, error| terminal_event(status, error, "m", None);
    assert_eq!(e(MessageStatus::Complete, None), ChatEvent::Done(DoneData::of("m")));
    assert_eq!(e(MessageStatus::Cancelled, None), ChatEvent::Cancelled(DoneData::of("m")));
    let failed = ErrorData { code: "quota".into(), message: "No credit".into() };
    assert_eq!(e(MessageStatus::Error, Some(failed.clone())), ChatEvent::Error(Box::new(failed)));
    assert!(matches!(e(MessageStatus::Interrupted, None), ChatEvent::Error(x) if x.code == INTERRUPTED));
}

#[test]
fn the_browser_reads_a_stored_step_as_the_server_does() {
    let mut r = TurnRecord::default();
    for e in &live() {
        r.apply(e);
    }
    let mut next = ToolCallRecord::started(ToolStartData {
        id: "n".into(),
        tool: "suggest_next".into(),
        args: ToolArgs::from_model(r#"{"replies":["Again"]}"#),
        display_text: "Suggesting".into(),
        round_index: 1,
    });
    next.end(&ToolEndData {
        output: Some("Shown.".into()),
        replies: vec!["Again".into()],
        actions: vec!["print_key".into()],
        ..ToolEndData::bare("n".into(), ToolStatus::Success)
    });
    r.tool_calls.push(next);
    r.tool_calls[1].proposal = Some(ProposalMark::decided("p1", crate::chat::proposal::ProposalStatus::Discarded, None, Some("Too long".into())));
    r.tool_calls[1].changes = vec![Change { kind: crate::lesson::ChangeKind::Added, block: Some("ex-1".into()), text: "Added exercise 1".into() }];
    let mut unfinished = TurnRecord::default();
    unfinished.apply(&start("x", "t", "{}", "T"));
    r.tool_calls.extend(unfinished.tool_calls);
    for step in &r.tool_calls {
        let json = serde_json::to_string(step).unwrap();
        let server: ToolCallRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(ToolCallRecord::read_stored(&json).unwrap(), server, "{json}");
    }
    assert!(ToolCallRecord::read_stored(r#"{"id":"a"}"#).is_err());
}

#[test]
fn steps_are_stored_flat() {
    let mut r = TurnRecord::default();
    for e in &live() {
        r.apply(e);
    }
    let json = serde_json::to_string(&r.tool_calls[0]).unwrap();
    assert_eq!(json, r#"{"id":"a","tool":"load_skill","args":{"skill":"fill-blanks"},"displayText":"Checking fill-blanks rules","roundIndex":1,"status":"success"}"#);
    let back: ToolCallRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r.tool_calls[0]);
    // A step saved while it ran reads back as one that did not finish.
    let mut running = TurnRecord::default();
    running.apply(&start("x", "t", "{}", "T"));
    let json = serde_json::to_string(&running.tool_calls).unwrap();
    let back: Vec<ToolCallRecord> = serde_json::from_str(&json).unwrap();
    assert!(!back[0].is_running() && back[0].error.as_deref() == Some(DID_NOT_FINISH), "{json}");
}
