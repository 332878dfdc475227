use serde_json::{json, Value};

use super::Design;
use crate::chat::{
    events::{AwaitingData, ChatEvent, DoneData, RoundData, TextData, TextDoneData, ToolArgs, ToolEndData, ToolStartData, ToolStatus},
    proposal::{ProposalMark, ProposalStatus},
};

fn start(id: &str, tool: &str, args: &str, round: u32) -> ToolStartData {
    ToolStartData { id: id.into(), tool: tool.into(), args: ToolArgs::from_model(args), display_text: String::new(), round_index: round }
}

fn end(id: &str, tool: &str, status: ToolStatus, round: u32) -> ChatEvent {
    ChatEvent::ToolEnd(Box::new(ToolEndData { tool: tool.into(), round_index: round, output: Some(format!("{id} said")), ..ToolEndData::bare(id.into(), status) }))
}

fn finished(round: u32, reason: &str) -> ChatEvent {
    ChatEvent::RoundFinished(RoundData { round, finish_reason: reason.into() })
}

/// Margin's events of a three-round turn as the agent says them: thinking,
/// text, two calls announced early in round 1 (one fails), an edit held in
/// round 2, the teacher's Apply, the last words in round 3, a closing note.
fn three_rounds() -> Vec<ChatEvent> {
    let reason = |t: &str, r| ChatEvent::Reasoning(TextData { content: t.into(), round_index: r });
    let mut applied = end("c3", "edit_document", ToolStatus::Proposed, 2);
    if let ChatEvent::ToolEnd(e) = &mut applied {
        e.decided = Some(ProposalMark::decided("p1", ProposalStatus::Applied, Some(2), None));
    }
    vec![
        reason("Plan: ", 1),
        reason("read the rules.", 1),
        ChatEvent::text_in(1, "Let me "),
        ChatEvent::ToolStart(Box::new(start("c1", "load_skill", "{}", 1))),
        ChatEvent::text_in(1, "check."),
        ChatEvent::ToolStart(Box::new(start("c2", "load_skill", "{}", 1))),
        ChatEvent::AssistantTextDone(Box::new(TextDoneData { full_text: "Let me check.".into(), round_index: 1 })),
        finished(1, "tool_calls"),
        ChatEvent::ToolInput(Box::new(start("c1", "load_skill", r#"{"skill":"true-false"}"#, 1))),
        ChatEvent::ToolInput(Box::new(start("c2", "load_skill", r#"{"skill":"nope"}"#, 1))),
        end("c1", "load_skill", ToolStatus::Success, 1),
        ChatEvent::ToolEnd(Box::new(ToolEndData { tool: "load_skill".into(), round_index: 1, error: Some("No skill “nope”.".into()), ..ToolEndData::bare("c2".into(), ToolStatus::Error) })),
        ChatEvent::text_in(2, "Here it is."),
        ChatEvent::ToolStart(Box::new(start("c3", "edit_document", "{}", 2))),
        finished(2, "tool_calls"),
        ChatEvent::ToolInput(Box::new(start("c3", "edit_document", r#"{"summary":"Added"}"#, 2))),
        ChatEvent::AwaitingApproval(Box::new(AwaitingData {
            id: "c3".into(),
            proposal_id: "p1".into(),
            changes: Vec::new(),
            digest: Some("d1".into()),
            decisions: vec![crate::chat::proposal::DecisionKind::Apply, crate::chat::proposal::DecisionKind::Discard],
            round_index: 2,
        })),
        applied,
        ChatEvent::text_in(3, "Done."),
        finished(3, "stop"),
        ChatEvent::text_in(3, "\n\n(A note.)"),
        ChatEvent::Done(DoneData::of("m1")),
    ]
}

fn said(events: &[ChatEvent]) -> (Vec<(u64, Value)>, Design) {
    let mut d = Design::new();
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        out.extend(d.feed(seq, e).into_iter().map(|v| (seq, v)));
    }
    (out, d)
}

#[test]
fn a_three_round_turn_is_said_in_the_designs_order_and_words() {
    let events = three_rounds();
    let (out, _) = said(&events);
    let values: Vec<Value> = out.iter().map(|(_, v)| v.clone()).collect();
    let calls_1 = json!([
        {"id": "c1", "name": "load_skill", "arguments": {"skill": "true-false"}},
        {"id": "c2", "name": "load_skill", "arguments": {"skill": "nope"}},
    ]);
    let calls_2 = json!([{"id": "c3", "name": "edit_document", "arguments": {"summary": "Added"}}]);
    let expected = vec![
        json!({"type": "thinking_chunk", "chunk": "Plan: ", "round_index": 0}),
        json!({"type": "thinking_chunk", "chunk": "read the rules.", "round_index": 0}),
        json!({"type": "thinking_done", "full_thinking": "Plan: read the rules.", "round_index": 0}),
        json!({"type": "assistant_text_chunk", "chunk": "Let me ", "round_index": 0}),
        json!({"type": "assistant_text_chunk", "chunk": "check.", "round_index": 0}),
        json!({"type": "assistant_text_done", "full_text": "Let me check.", "round_index": 0}),
        json!({"type": "tool_calls", "round_index": 0, "tool_calls": calls_1}),
        json!({"type": "tool_result", "round_index": 0, "call_id": "c1", "name": "load_skill", "success": true, "result": "c1 said", "preview": "c1 said"}),
        json!({"type": "tool_result", "round_index": 0, "call_id": "c2", "name": "load_skill", "success": false, "error": "No skill “nope”."}),
        json!({"type": "round_executed", "round_index": 0, "thinking": "Plan: read the rules.", "tool_calls": calls_1}),
        json!({"type": "assistant_text_chunk", "chunk": "Here it is.", "round_index": 1}),
        json!({"type": "assistant_text_done", "full_text": "Here it is.", "round_index": 1}),
        json!({"type": "tool_calls", "round_index": 1, "tool_calls": calls_2}),
        json!({"type": "tool_result", "round_index": 1, "call_id": "c3", "name": "edit_document", "success": true, "result": "c3 said", "preview": "c3 said",
               "decided": {"id": "p1", "status": "applied", "revision": 2}}),
        json!({"type": "round_executed", "round_index": 1, "thinking": "", "tool_calls": calls_2}),
        json!({"type": "assistant_text_chunk", "chunk": "Done.", "round_index": 2}),
        json!({"type": "assistant_text_done", "full_text": "Done.", "round_index": 2}),
        json!({"type": "assistant_text_done", "full_text": "\n\n(A note.)", "round_index": 2}),
        json!({"type": "done", "final": {
            "text": "Let me check.Here it is.Done.\n\n(A note.)",
            "thinking": "Plan: read the rules.",
            "executed_rounds": [
                {"thinking": "Plan: read the rules.", "tool_calls": calls_1},
                {"thinking": "", "tool_calls": calls_2},
            ],
            "tool_calls": [],
            "turn_id": null,
            "message_id": "m1",
            "status": "complete",
        }}),
    ];
    for (i, (got, want)) in values.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "event {i}");
    }
    assert_eq!(values.len(), expected.len(), "{values:#?}");
    // One `done`, last; one `tool_calls` per round with calls.
    assert_eq!(values.iter().filter(|v| v["type"] == "done").count(), 1);
    assert_eq!(values.iter().filter(|v| v["type"] == "tool_calls").count(), 2);
}

#[test]
fn a_pause_is_said_as_an_early_done_naming_the_turn_and_what_waits() {
    let events = three_rounds();
    let pause = events.iter().position(|e| matches!(e, ChatEvent::AwaitingApproval(_))).unwrap();
    let (out, d) = said(&events[..=pause]);
    assert_eq!(d.paused_at(), Some(pause as u64 + 1));
    let done = d.pause_done("t1", "m1");
    assert_eq!(
        done,
        json!({"type": "done", "final": {
            "text": "Let me check.Here it is.",
            "thinking": "Plan: read the rules.",
            "executed_rounds": [{"thinking": "Plan: read the rules.", "tool_calls": [
                {"id": "c1", "name": "load_skill", "arguments": {"skill": "true-false"}},
                {"id": "c2", "name": "load_skill", "arguments": {"skill": "nope"}},
            ]}],
            "tool_calls": [{"id": "c3", "name": "edit_document", "arguments": {"summary": "Added"}, "proposal_id": "p1", "changes": [], "digest": "d1", "decisions": ["apply", "discard"]}],
            "turn_id": "t1",
            "message_id": "m1",
            "status": "awaiting",
        }})
    );
    // Before the pause, the held call's round said its calls, and no result for it.
    let last = &out.last().unwrap().1;
    assert_eq!(last["type"], "tool_calls", "{last}");
    // Once decided, nothing waits any more.
    let (_, d) = said(&events[..=pause + 1]);
    assert_eq!(d.paused_at(), None);
}

#[test]
fn a_failed_turn_says_its_error_then_done() {
    let events = vec![ChatEvent::text_in(1, "Half"), ChatEvent::error("provider", "The model's service failed.")];
    let (out, _) = said(&events);
    let types: Vec<&str> = out.iter().map(|(_, v)| v["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["assistant_text_chunk", "assistant_text_done", "error", "done"]);
    assert_eq!(out[2].1, json!({"type": "error", "code": "provider", "message": "The model's service failed."}));
    assert_eq!(out[3].1["final"]["status"], "error");
    assert_eq!(out[3].1["final"]["text"], "Half");
}
