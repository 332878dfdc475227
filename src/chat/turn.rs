//! One record of a turn, for both targets: its reply text, its steps, how it
//! ended and what it cost. A turn *is* its events: [`TurnRecord::apply`] folds
//! one in, [`TurnRecord::events`] gives back the events a record stands for.
//! The server's turn engine keeps one while the turn runs (and stores it), the
//! agent hands one back, a finished turn is replayed from one, and the
//! browser shows a stored reply by feeding its events through the same path
//! as a live one. How a final status reads as the turn's last event is
//! written once, in [`terminal_event`].

use serde::{Deserialize, Serialize};

use super::{
    events::{ChatEvent, DoneData, ErrorData, TextData, ToolEndData, ToolStartData, ToolStatus, UsageData},
    proposal::ProposalMark,
};
use crate::lesson::Change;

/// Where a message (and so a turn) stands; it lives here, beside the
/// record whose status it is, and `message` re-exports it.
/// User messages are always `Complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageStatus {
    Running,
    /// Running, paused on an edit held for the teacher's decision.
    Awaiting,
    Complete,
    Error,
    Interrupted,
    Cancelled,
}

impl MessageStatus {
    /// Whether the reply is still under way (paused counts).
    pub fn is_running(self) -> bool {
        matches!(self, Self::Running | Self::Awaiting)
    }

    /// A status as the database stores it (anything unknown: complete).
    pub fn parse(s: &str) -> Self {
        Self::from_wire(s).unwrap_or(Self::Complete)
    }
}

crate::wire_enum::wire_enum!(MessageStatus { Running => "running", Awaiting => "awaiting", Complete => "complete", Error => "error", Interrupted => "interrupted", Cancelled => "cancelled" });

/// What an unfinished step says once its turn is over.
pub const DID_NOT_FINISH: &str = "did not finish";

/// One step of a turn: the call as it was announced (`tool_start`) and, once
/// it has ended, how (`tool_end`).
///
/// Stored as one flat JSON object (`id`, `tool`, `args`, `displayText`,
/// `status`, `error`, `summary`, `output`, for edits `revision`, `changes`,
/// `proposal`, for `suggest_next` `replies` and `actions`, for
/// `create_lesson` `lesson`). A step stored before it ended reads as
/// failed ("did not finish"): that is what it is if its turn stops there.
///
/// The browser reads a stored step with the readers it has anyway for the
/// events `tool_start` and `tool_end` ([`ToolCallRecord::read_stored`]):
/// a reader of its own for the stored shape cost the bundle several KB.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(not(feature = "hydrate"), derive(Deserialize), serde(from = "stored::Step"))]
#[serde(into = "stored::Step")]
pub struct ToolCallRecord {
    /// The call as `tool_start` announced it.
    pub call: ToolStartData,
    /// How it ended (until then: `Error`, "did not finish").
    pub status: ToolStatus,
    pub error: Option<String>,
    /// A one-line account of what the tool did (an edit's summary).
    pub summary: Option<String>,
    /// The revision an edit was stored as.
    pub revision: Option<i64>,
    /// What an edit changed or would change, in the teacher's words.
    pub changes: Vec<Change>,
    /// An edit held for review, and what the teacher decided.
    pub proposal: Option<ProposalMark>,
    /// What the model was told (cut to `OUTPUT_SHOWN`), for the step's "Details".
    pub output: Option<String>,
    /// What a `suggest_next` call offered the teacher.
    pub replies: Vec<String>,
    /// The words of the page's actions it offered.
    pub actions: Vec<String>,
    /// The lesson a `create_lesson` call made.
    pub lesson: Option<super::events::MadeLesson>,
    /// The version that undid this step's edit, when the teacher took it
    /// back (read from the lesson's versions when the chat is read; never
    /// stored with the step).
    pub undone: Option<i64>,
    /// Where in the reply's text the step was called (its length then, in
    /// bytes): the reply reads as text and groups of steps in that order.
    pub at: u32,
    /// The step is under way in this process (never stored).
    running: bool,
}

impl std::ops::Deref for ToolCallRecord {
    type Target = ToolStartData;

    fn deref(&self) -> &ToolStartData {
        &self.call
    }
}

impl ToolCallRecord {
    pub fn started(call: ToolStartData) -> Self {
        Self {
            call,
            status: ToolStatus::Error,
            error: Some(DID_NOT_FINISH.into()),
            summary: None,
            revision: None,
            changes: Vec::new(),
            proposal: None,
            output: None,
            replies: Vec::new(),
            actions: Vec::new(),
            lesson: None,
            at: 0,
            undone: None,
            running: true,
        }
    }

    fn end(&mut self, end: &ToolEndData) {
        self.status = end.status;
        self.error = end.error.clone();
        self.summary = end.summary.clone();
        self.revision = end.revision;
        self.changes = end.changes.clone();
        // Decided, when the reply went on from the teacher's decision.
        self.proposal = end.decided.clone().or_else(|| end.proposal_id.as_ref().map(|id| ProposalMark::held(id, end.digest.clone(), end.decisions.clone())));
        self.output = end.output.clone();
        self.replies = end.replies.clone();
        self.actions = end.actions.clone();
        self.lesson = end.lesson.clone();
        self.running = false;
    }

    /// A step as stored (its flat JSON), read as the `tool_start` and the
    /// `tool_end` it was made of, plus what the teacher decided about it.
    pub fn read_stored(json: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Decided {
            #[serde(default)]
            proposal: Option<ProposalMark>,
            #[serde(default)]
            at: u32,
            #[serde(default)]
            undone: Option<i64>,
        }
        let mut step = Self::started(serde_json::from_str(json)?);
        step.end(&serde_json::from_str(json)?);
        let decided = serde_json::from_str::<Decided>(json)?;
        step.proposal = decided.proposal;
        step.at = decided.at;
        step.undone = decided.undone;
        Ok(step)
    }

    /// Under way again: the step a stored turn paused on, when the turn is
    /// resumed (its end is still to come).
    pub fn reopen(&mut self) {
        self.running = true;
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    pub fn succeeded(&self) -> bool {
        !self.running && self.status == ToolStatus::Success
    }

    /// The `tool_end` this step stands for, without a document or its
    /// revision (the caller adds them where the document is still the
    /// lesson's); `None` while it runs. What the teacher decided about a
    /// proposal, and the revision an edit made, are read off the record.
    pub fn end_event(&self) -> Option<ToolEndData> {
        if self.running {
            return None;
        }
        Some(ToolEndData {
            id: self.call.id.clone(),
            tool: self.call.tool.clone(),
            round_index: self.call.round_index,
            status: self.status,
            error: self.error.clone(),
            summary: self.summary.clone(),
            document_xml: None,
            document_html: None,
            revision: None,
            changes: self.changes.clone(),
            proposal_id: self.proposal.as_ref().map(|p| p.id.clone()),
            digest: self.proposal.as_ref().and_then(|p| p.digest.clone()),
            decisions: self.proposal.as_ref().map(|p| p.decisions.clone()).unwrap_or_default(),
            output: self.output.clone(),
            replies: self.replies.clone(),
            actions: self.actions.clone(),
            lesson: self.lesson.clone(),
            decided: self.proposal.clone().filter(|p| p.status != crate::chat::proposal::ProposalStatus::Pending),
        })
    }
}

/// A turn as far as it has come.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRecord {
    /// The reply's markdown, as streamed.
    pub text: String,
    /// The model's reasoning, as streamed (reasoning models only).
    pub reasoning: String,
    pub tool_calls: Vec<ToolCallRecord>,
    /// The lesson after the turn's last successful edit.
    pub document_xml: Option<String>,
    pub status: MessageStatus,
    pub error: Option<ErrorData>,
    pub usage: UsageData,
    /// How many rounds (model calls) the turn has had: the highest
    /// `roundIndex` of its events.
    pub rounds: u32,
}

/// A finished turn's record as the protocol gives it: the `final` of `done`
/// and `cancelled`, and of the JSON turn API.
#[cfg(not(feature = "hydrate"))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnFinal {
    pub text: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// Every step, in the order the model called them.
    pub steps: Vec<ToolCallRecord>,
    pub usage: UsageData,
    pub rounds: u32,
}

impl Default for TurnRecord {
    fn default() -> Self {
        Self {
            text: String::new(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            document_xml: None,
            status: MessageStatus::Running,
            error: None,
            usage: UsageData::default(),
            rounds: 0,
        }
    }
}

impl TurnRecord {
    /// Folds one event in.
    pub fn apply(&mut self, event: &ChatEvent) {
        if let Some(round) = event.round_index() {
            self.rounds = self.rounds.max(round);
        }
        match event {
            ChatEvent::Text(t) => self.text.push_str(&t.content),
            ChatEvent::Reasoning(t) => self.reasoning.push_str(&t.content),
            ChatEvent::ToolStart(s) | ChatEvent::ToolInput(s) => match self.tool_calls.iter_mut().rev().find(|c| c.call.id == s.id) {
                // A call announced early says its arguments once they are in.
                Some(c) if c.is_running() => c.call = (**s).clone(),
                _ => {
                    let mut step = ToolCallRecord::started((**s).clone());
                    step.at = u32::try_from(self.text.len()).unwrap_or(u32::MAX);
                    self.tool_calls.push(step);
                }
            },
            ChatEvent::ToolEnd(end) => {
                if let Some(c) = self.tool_calls.iter_mut().rev().find(|c| c.call.id == end.id) {
                    c.end(end);
                }
                if end.status == ToolStatus::Success && end.document_xml.is_some() {
                    self.document_xml.clone_from(&end.document_xml);
                }
            }
            ChatEvent::Usage(u) => self.usage = *u,
            // Progress is for the spinner of the moment, not the record.
            // Waiting for the teacher: the step shows the proposal until
            // its end says what they decided.
            ChatEvent::AwaitingApproval(a) => {
                if let Some(c) = self.tool_calls.iter_mut().rev().find(|c| c.call.id == a.id) {
                    c.status = ToolStatus::Proposed;
                    c.error = None;
                    c.changes.clone_from(&a.changes);
                    c.proposal = Some(ProposalMark::held(&a.proposal_id, a.digest.clone(), a.decisions.clone()));
                }
            }
            // A warning is one reader's, never the turn's; a round's whole
            // text is already in.
            ChatEvent::RoundFinished(_) | ChatEvent::ToolProgress(_) | ChatEvent::Warning(_) | ChatEvent::AssistantTextDone(_) => {}
            ChatEvent::Done(_) => self.end(MessageStatus::Complete, None),
            ChatEvent::Cancelled(_) => self.end(MessageStatus::Cancelled, None),
            ChatEvent::Error(e) => {
                let status = if e.code == INTERRUPTED { MessageStatus::Interrupted } else { MessageStatus::Error };
                self.end(status, Some((**e).clone()));
            }
        }
    }

    /// Ends the turn: steps still running did not finish.
    fn end(&mut self, status: MessageStatus, error: Option<ErrorData>) {
        self.status = status;
        self.error = error;
        for c in self.tool_calls.iter_mut().filter(|c| c.is_running()) {
            c.running = false; // and so, as it reads already, did not finish
        }
    }

    pub fn is_over(&self) -> bool {
        !self.status.is_running()
    }

    /// The reply in the order it happened: pieces of text (byte ranges of
    /// `text`) and groups of steps (indices into `tool_calls`) called
    /// between them.
    pub fn parts(&self) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut cursor = 0;
        let mut group = Vec::new();
        for (i, step) in self.tool_calls.iter().enumerate() {
            let at = (step.at as usize).clamp(cursor, self.text.len());
            if at > cursor && self.text.is_char_boundary(at) {
                if !group.is_empty() {
                    parts.push(Part::Steps(std::mem::take(&mut group)));
                }
                parts.push(Part::Text(cursor..at));
                cursor = at;
            }
            group.push(i);
        }
        if !group.is_empty() {
            parts.push(Part::Steps(group));
        }
        if cursor < self.text.len() {
            parts.push(Part::Text(cursor..self.text.len()));
        }
        parts
    }

    /// The events this record stands for: the reasoning, then its parts in
    /// order (text, and each step's start and end), then the last event if
    /// the turn is over (`message_id` names the stored reply in `done` and
    /// `cancelled`). Documents are not repeated here: whoever replays a turn
    /// knows whether its edit is still current.
    ///
    /// A piece of text is given the round of the steps after it (the
    /// trailing text, the last round); reasoning, the last round.
    pub fn events(&self, message_id: &str) -> Vec<ChatEvent> {
        let mut out = Vec::with_capacity(self.tool_calls.len() * 2 + 3);
        if !self.reasoning.is_empty() {
            out.push(ChatEvent::Reasoning(TextData { content: self.reasoning.clone(), round_index: self.rounds }));
        }
        let parts = self.parts();
        for (n, part) in parts.iter().enumerate() {
            match part {
                Part::Text(range) => {
                    let round = match parts.get(n + 1) {
                        Some(Part::Steps(ids)) => self.tool_calls[ids[0]].call.round_index,
                        _ => self.rounds,
                    };
                    out.push(ChatEvent::Text(TextData { content: self.text[range.clone()].to_string(), round_index: round }));
                }
                Part::Steps(ids) => {
                    for c in ids.iter().map(|&i| &self.tool_calls[i]) {
                        out.push(ChatEvent::ToolStart(Box::new(c.call.clone())));
                        if let Some(end) = c.end_event() {
                            out.push(ChatEvent::ToolEnd(Box::new(end)));
                        }
                    }
                }
            }
        }
        if self.is_over() {
            out.push(terminal_event(self.status, self.error.clone(), message_id, Some(self)));
        }
        out
    }

    /// The record as `done` gives it.
    #[cfg(not(feature = "hydrate"))]
    pub fn final_record(&self) -> TurnFinal {
        TurnFinal {
            text: self.text.clone(),
            reasoning: self.reasoning.clone(),
            steps: self.tool_calls.clone(),
            usage: self.usage,
            rounds: self.rounds,
        }
    }
}

/// One part of a reply, in order: a piece of its text (a byte range of the
/// record's `text`), or a group of steps called one after another with no
/// text between them (indices into `tool_calls`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(std::ops::Range<usize>),
    Steps(Vec<usize>),
}

/// The code of the error a turn ends with when the server, not the teacher
/// or the provider, stopped it.
pub const INTERRUPTED: &str = "interrupted";

/// The last event of a turn that ended with `status`: `done`, `cancelled`
/// (with the turn's `record` as their `final`, when it is given), or
/// `error` (with `error`, or one saying the reply did not finish, also for a
/// turn still marked running that no process runs any more).
pub fn terminal_event(status: MessageStatus, error: Option<ErrorData>, message_id: &str, record: Option<&TurnRecord>) -> ChatEvent {
    let done = || {
        #[cfg(not(feature = "hydrate"))]
        return DoneData { message_id: message_id.to_string(), record: record.map(|r| Box::new(r.final_record())) };
        #[cfg(feature = "hydrate")]
        {
            let _ = record;
            DoneData::of(message_id)
        }
    };
    match (status, error) {
        (MessageStatus::Cancelled, _) => ChatEvent::Cancelled(done()),
        (MessageStatus::Complete, _) => ChatEvent::Done(done()),
        (_, Some(e)) => ChatEvent::Error(Box::new(e)),
        (_, None) => ChatEvent::error(INTERRUPTED, "This reply did not finish."),
    }
}

#[cfg(feature = "hydrate")]
impl<'de> Deserialize<'de> for ToolCallRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        Self::read_stored(raw.get()).map_err(serde::de::Error::custom)
    }
}

/// The stored shape of a step, kept flat as it has always been.
mod stored;

#[cfg(test)]
mod tests;
