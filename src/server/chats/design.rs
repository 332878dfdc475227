//! A turn in the design's own words (seed 004, "true streaming"), for a
//! client written to that design rather than to Margin's events: asked with
//! `?protocol=004` on `POST /api/chat/stream` and on
//! `GET /api/chat/turns/{id}/events` (docs/api.md, "The design's protocol").
//!
//! The same turn, read through a translation of its events: rounds from 0;
//! in each, `thinking_chunk`*, `thinking_done`, `assistant_text_chunk`*,
//! `assistant_text_done`, one `tool_calls` with every call's complete
//! arguments, a `tool_result` per call, `round_executed` once the round's
//! tools ran; `done {final}` last, or early at a pause, where
//! `final.turn_id` names the turn and `final.tool_calls` the calls waiting.
//! Deciding a held call (Apply or Discard) and asking the turn's events
//! again from the pause's id goes on with the same turn, in the same words.
//!
//! Margin's own events stay what the sidebar reads; this is a view of them,
//! so the two can never say different things about a turn.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::chat::{
    events::{ChatEvent, ToolEndData, ToolStatus},
    proposal::ProposalStatus,
    turn::{MessageStatus, TurnRecord},
};

/// The value of `protocol` that asks for the design's words.
pub const PROTOCOL: &str = "004";

/// How long a `tool_result`'s `preview` is, in characters.
const PREVIEW_CHARS: usize = 200;

/// A call as the design lists it: `{id, name, arguments}`.
#[derive(Clone)]
struct Call {
    id: String,
    name: String,
    arguments: Value,
    /// Its complete arguments are in (`tool_input`, or a replayed start).
    complete: bool,
}

impl Call {
    fn json(&self) -> Value {
        json!({ "id": self.id, "name": self.name, "arguments": self.arguments })
    }
}

/// What a round holds as it is read.
#[derive(Default)]
struct Round {
    /// Margin's number for it (from 1; 0 before any).
    margin: u32,
    thinking: String,
    thinking_done: bool,
    text: String,
    /// The model's call for this round is over: its text, thinking and
    /// calls are said.
    closed: bool,
    calls: Vec<Call>,
    /// `tool_calls` was said.
    calls_said: bool,
    results: usize,
    executed: bool,
}

/// A round as `final.executed_rounds` keeps it.
#[derive(Default)]
struct RoundLog {
    thinking: String,
    calls: Vec<Call>,
    /// One of its calls has a result.
    ran: bool,
}

/// A call waiting for the teacher, as `final.tool_calls` lists it.
#[derive(Clone)]
pub struct Waiting {
    pub id: String,
    pub proposal_id: String,
    pub changes: Value,
    /// The digest a decision names, and the decisions the call's tool allows.
    pub digest: Option<String>,
    pub decisions: Vec<crate::chat::proposal::DecisionKind>,
}

/// Reads Margin's events of one turn and says them in the design's words.
#[derive(Default)]
pub struct Design {
    round: Round,
    text: String,
    thinking: String,
    /// Text said after its round's model call was over (a closing note):
    /// said whole, as the design says its own "max rounds" note.
    late: String,
    /// Each round's thinking and calls, by Margin's number: the `final`
    /// reads these, whatever order the events came in.
    by_round: BTreeMap<u32, RoundLog>,
    /// Calls waiting for the teacher, with the number of their pause.
    waiting: Vec<(u64, Waiting)>,
    ended: bool,
}

fn design_round(margin: u32) -> u32 {
    margin.saturating_sub(1)
}

fn arguments_of(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

impl Design {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in the event numbered `seq`; returns what the design says for it.
    pub fn feed(&mut self, seq: u64, event: &ChatEvent) -> Vec<Value> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        if let Some(r) = event.round_index().filter(|r| *r > self.round.margin) {
            self.next_round(r, &mut out);
        }
        let index = design_round(self.round.margin);
        match event {
            ChatEvent::Reasoning(t) => {
                self.thinking.push_str(&t.content);
                self.by_round.entry(t.round_index).or_default().thinking.push_str(&t.content);
                self.round.thinking.push_str(&t.content);
                // Thinking after the round's text began is kept for
                // `round_executed` and `final`, not streamed: the design
                // says all of a round's thinking before its text.
                if self.round.text.is_empty() && !self.round.closed {
                    out.push(json!({ "type": "thinking_chunk", "chunk": t.content, "round_index": index }));
                }
            }
            ChatEvent::Text(t) => {
                self.text.push_str(&t.content);
                if self.round.closed {
                    self.late.push_str(&t.content);
                } else {
                    self.thinking_done(&mut out);
                    self.round.text.push_str(&t.content);
                    out.push(json!({ "type": "assistant_text_chunk", "chunk": t.content, "round_index": index }));
                }
            }
            ChatEvent::ToolStart(s) | ChatEvent::ToolInput(s) => {
                let complete = matches!(event, ChatEvent::ToolInput(_)) || s.args.json() != "{}";
                let call = Call { id: s.id.clone(), name: s.tool.clone(), arguments: arguments_of(s.args.json()), complete };
                let calls = &mut self.by_round.entry(s.round_index).or_default().calls;
                match calls.iter_mut().find(|c| c.id == call.id) {
                    Some(c) => *c = call.clone(),
                    None => calls.push(call.clone()),
                }
                match self.round.calls.iter_mut().find(|c| c.id == call.id) {
                    Some(c) => (c.arguments, c.complete) = (call.arguments, c.complete || call.complete),
                    None => self.round.calls.push(call),
                }
                // The round's calls are said once all their arguments are in.
                if self.round.closed && self.round.calls.iter().all(|c| c.complete) {
                    self.say_calls(&mut out);
                }
            }
            ChatEvent::RoundFinished(_) => self.close(&mut out),
            ChatEvent::AwaitingApproval(a) => {
                self.close(&mut out);
                self.say_calls(&mut out);
                let waiting = Waiting { id: a.id.clone(), proposal_id: a.proposal_id.clone(), changes: json!(a.changes), digest: a.digest.clone(), decisions: a.decisions.clone() };
                self.waiting.retain(|(_, w)| w.id != a.id);
                self.waiting.push((seq, waiting));
            }
            ChatEvent::ToolEnd(end) => {
                // Replayed from a record, a round has no end of its own: its
                // calls running say it is over.
                self.close(&mut out);
                self.say_calls(&mut out);
                self.waiting.retain(|(_, w)| w.id != end.id);
                self.by_round.entry(end.round_index).or_default().ran = true;
                out.push(result(index, end));
                self.round.results += 1;
                if self.round.results >= self.round.calls.len() {
                    self.executed(&mut out);
                }
            }
            ChatEvent::Done(_) | ChatEvent::Cancelled(_) | ChatEvent::Error(_) => {
                self.finish(&mut out);
                let status = match event {
                    ChatEvent::Done(_) => MessageStatus::Complete,
                    ChatEvent::Cancelled(_) => MessageStatus::Cancelled,
                    _ => MessageStatus::Error,
                };
                if let ChatEvent::Error(e) = event {
                    out.push(json!({ "type": "error", "code": e.code, "message": e.message }));
                }
                let message_id = match event {
                    ChatEvent::Done(d) | ChatEvent::Cancelled(d) => Some(d.message_id.clone()),
                    _ => None,
                };
                out.push(json!({ "type": "done", "final": self.final_value(status, None, message_id.as_deref()) }));
                self.ended = true;
            }
            ChatEvent::ToolProgress(_) | ChatEvent::AssistantTextDone(_) | ChatEvent::Usage(_) | ChatEvent::Warning(_) => {}
        }
        out
    }

    /// The calls waiting for the teacher now, with the number of the event
    /// that paused on the last of them.
    pub fn paused_at(&self) -> Option<u64> {
        self.waiting.iter().map(|(n, _)| *n).max()
    }

    /// The early `done` of a pause: the turn so far, what waits, the turn's id.
    pub fn pause_done(&self, turn_id: &str, message_id: &str) -> Value {
        json!({ "type": "done", "final": self.final_value(MessageStatus::Awaiting, Some(turn_id), Some(message_id)) })
    }

    fn thinking_done(&mut self, out: &mut Vec<Value>) {
        if !self.round.thinking.is_empty() && !self.round.thinking_done {
            self.round.thinking_done = true;
            out.push(json!({ "type": "thinking_done", "full_thinking": self.round.thinking, "round_index": design_round(self.round.margin) }));
        }
    }

    /// The round's model call is over: its thinking, text and calls are said.
    fn close(&mut self, out: &mut Vec<Value>) {
        if self.round.closed {
            return;
        }
        self.round.closed = true;
        let index = design_round(self.round.margin);
        self.thinking_done(out);
        if !self.round.text.is_empty() {
            out.push(json!({ "type": "assistant_text_done", "full_text": self.round.text, "round_index": index }));
        }
    }

    /// The round's calls, once, with their arguments (before any result).
    fn say_calls(&mut self, out: &mut Vec<Value>) {
        if self.round.calls_said || self.round.calls.is_empty() {
            return;
        }
        self.round.calls_said = true;
        let calls: Vec<Value> = self.round.calls.iter().map(Call::json).collect();
        out.push(json!({ "type": "tool_calls", "round_index": design_round(self.round.margin), "tool_calls": calls }));
    }

    /// The round's tools ran (all of them, or as many as did).
    fn executed(&mut self, out: &mut Vec<Value>) {
        if self.round.executed || self.round.results == 0 {
            return;
        }
        self.round.executed = true;
        let calls: Vec<Value> = self.round.calls.iter().map(Call::json).collect();
        out.push(json!({
            "type": "round_executed",
            "round_index": design_round(self.round.margin),
            "thinking": self.round.thinking,
            "tool_calls": calls,
        }));
    }

    fn next_round(&mut self, margin: u32, out: &mut Vec<Value>) {
        self.finish(out);
        self.round = Round { margin, ..Round::default() };
    }

    /// Everything the open round still owes, and a closing note.
    fn finish(&mut self, out: &mut Vec<Value>) {
        self.close(out);
        self.say_calls(out);
        self.executed(out);
        if !self.late.is_empty() {
            let full_text = std::mem::take(&mut self.late);
            out.push(json!({ "type": "assistant_text_done", "full_text": full_text, "round_index": design_round(self.round.margin) }));
        }
    }

    /// The design's `FinalResult`: `turn_id` only while calls wait for the
    /// teacher (they are `tool_calls`, with the proposal to decide and what
    /// it would change), `null` once nothing does.
    fn final_value(&self, status: MessageStatus, paused_turn: Option<&str>, message_id: Option<&str>) -> Value {
        let pending: Vec<Value> = if paused_turn.is_some() {
            self.waiting
                .iter()
                .map(|(_, w)| {
                    let call = self.by_round.values().flat_map(|r| &r.calls).find(|c| c.id == w.id);
                    let mut v = Map::new();
                    v.insert("id".into(), json!(w.id));
                    v.insert("name".into(), json!(call.map(|c| c.name.as_str()).unwrap_or_default()));
                    v.insert("arguments".into(), call.map_or(Value::Null, |c| c.arguments.clone()));
                    v.insert("proposal_id".into(), json!(w.proposal_id));
                    v.insert("changes".into(), w.changes.clone());
                    v.insert("digest".into(), json!(w.digest));
                    v.insert("decisions".into(), json!(w.decisions));
                    Value::Object(v)
                })
                .collect()
        } else {
            Vec::new()
        };
        // Each round whose calls ran, in order, as the rounds' own events
        // say (a record keeps no round's end).
        let executed: Vec<Value> = self
            .by_round
            .values()
            .filter(|r| r.ran && !r.calls.is_empty())
            .map(|r| json!({ "thinking": r.thinking, "tool_calls": r.calls.iter().map(Call::json).collect::<Vec<_>>() }))
            .collect();
        json!({
            "text": self.text,
            "thinking": self.thinking,
            "executed_rounds": if executed.is_empty() { Value::Null } else { Value::Array(executed) },
            "tool_calls": pending,
            "turn_id": paused_turn,
            "message_id": message_id,
            "status": status,
        })
    }

    /// The `final` of a turn read from its record (the JSON answer): as it
    /// ended, or paused on `waiting`.
    pub fn final_of_record(record: &TurnRecord, status: MessageStatus, waiting: Vec<Waiting>, turn_id: &str, message_id: &str) -> Value {
        let mut d = Design::new();
        for (n, e) in for_replay(record.events(message_id)).iter().enumerate() {
            let waits = matches!(e, ChatEvent::ToolEnd(end) if waiting.iter().any(|w| w.id == end.id));
            if !e.is_terminal() && !waits {
                d.feed(n as u64 + 1, e);
            }
        }
        let mut tail = Vec::new();
        d.finish(&mut tail);
        d.waiting = waiting.into_iter().map(|w| (0, w)).collect();
        let paused = (status == MessageStatus::Awaiting).then_some(turn_id);
        d.final_value(status, paused, Some(message_id))
    }
}

/// A stored turn's events (`TurnRecord::events`) in the order a live turn
/// says them: the reasoning, which a record keeps whole and names with the
/// last round, before that round's first event; and in each run of one
/// round's steps, every call's start before the first end.
pub fn for_replay(events: Vec<ChatEvent>) -> Vec<ChatEvent> {
    let (reasoning, rest): (Vec<ChatEvent>, Vec<ChatEvent>) = events.into_iter().partition(|e| matches!(e, ChatEvent::Reasoning(_)));
    let mut out: Vec<ChatEvent> = Vec::with_capacity(rest.len() + reasoning.len());
    let mut steps: Vec<ChatEvent> = Vec::new();
    let flush = |steps: &mut Vec<ChatEvent>, out: &mut Vec<ChatEvent>| {
        let (starts, ends): (Vec<ChatEvent>, Vec<ChatEvent>) = steps.drain(..).partition(|e| matches!(e, ChatEvent::ToolStart(_)));
        out.extend(starts);
        out.extend(ends);
    };
    for e in rest {
        let step = matches!(e, ChatEvent::ToolStart(_) | ChatEvent::ToolEnd(_));
        if !step || steps.first().and_then(ChatEvent::round_index) != e.round_index() {
            flush(&mut steps, &mut out);
        }
        if step {
            steps.push(e);
        } else {
            out.push(e);
        }
    }
    flush(&mut steps, &mut out);
    for r in reasoning {
        let at = out.iter().position(|e| e.round_index() >= r.round_index() || e.is_terminal()).unwrap_or(out.len());
        out.insert(at, r);
    }
    out
}

/// A call's result: `success` is whether it did what it was called for (a
/// held edit: whether the teacher applied it, or it stays proposed).
fn result(index: u32, end: &ToolEndData) -> Value {
    let decided = end.decided.as_ref().map(|d| d.status);
    let success = match end.status {
        ToolStatus::Success => true,
        ToolStatus::Error => false,
        ToolStatus::Proposed => matches!(decided, None | Some(ProposalStatus::Applied | ProposalStatus::Pending)),
    };
    let mut v = Map::new();
    v.insert("type".into(), json!("tool_result"));
    v.insert("round_index".into(), json!(index));
    v.insert("call_id".into(), json!(end.id));
    v.insert("name".into(), json!(end.tool));
    v.insert("success".into(), json!(success));
    let said = end.output.clone().or_else(|| end.summary.clone());
    if success {
        if let Some(r) = &said {
            v.insert("result".into(), json!(r));
        }
        if let Some(p) = end.summary.clone().or_else(|| said.as_ref().map(|s| s.chars().take(PREVIEW_CHARS).collect())) {
            v.insert("preview".into(), json!(p));
        }
    } else if let Some(e) = end.error.clone().or(said) {
        v.insert("error".into(), json!(e));
    }
    if let Some(d) = &end.decided {
        v.insert("decided".into(), json!(d));
    }
    Value::Object(v)
}

mod stream;
pub use stream::{log_batches, response, Batch};

#[cfg(test)]
mod tests;
