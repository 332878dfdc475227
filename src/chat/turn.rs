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
    message::MessageStatus,
    proposal::ProposalMark,
};
use crate::lesson::Change;

/// What an unfinished step says once its turn is over.
pub const DID_NOT_FINISH: &str = "did not finish";

/// One step of a turn: the call as it was announced (`tool_start`) and, once
/// it has ended, how (`tool_end`).
///
/// Stored as one flat JSON object (`id`, `tool`, `args`, `displayText`,
/// `status`, `error`, `summary`, `output`, for edits `revision`, `changes`,
/// `proposal`, and for `suggest_next` `replies` and `actions`). A step stored before it ended reads as
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
            running: true,
        }
    }

    fn end(&mut self, end: &ToolEndData) {
        self.status = end.status;
        self.error = end.error.clone();
        self.summary = end.summary.clone();
        self.revision = end.revision;
        self.changes = end.changes.clone();
        self.proposal = end.proposal_id.as_ref().map(ProposalMark::pending);
        self.output = end.output.clone();
        self.replies = end.replies.clone();
        self.actions = end.actions.clone();
        self.running = false;
    }

    /// A step as stored (its flat JSON), read as the `tool_start` and the
    /// `tool_end` it was made of, plus what the teacher decided about it.
    pub fn read_stored(json: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Decided {
            #[serde(default)]
            proposal: Option<ProposalMark>,
        }
        let mut step = Self::started(serde_json::from_str(json)?);
        step.end(&serde_json::from_str(json)?);
        step.proposal = serde_json::from_str::<Decided>(json)?.proposal;
        Ok(step)
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
            status: self.status,
            error: self.error.clone(),
            summary: self.summary.clone(),
            document_xml: None,
            document_html: None,
            revision: None,
            changes: self.changes.clone(),
            proposal_id: self.proposal.as_ref().map(|p| p.id.clone()),
            output: self.output.clone(),
            replies: self.replies.clone(),
            actions: self.actions.clone(),
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
        }
    }
}

impl TurnRecord {
    /// Folds one event in.
    pub fn apply(&mut self, event: &ChatEvent) {
        match event {
            ChatEvent::Text(t) => self.text.push_str(&t.content),
            ChatEvent::Reasoning(t) => self.reasoning.push_str(&t.content),
            ChatEvent::ToolStart(s) => match self.tool_calls.iter_mut().rev().find(|c| c.call.id == s.id) {
                // A call announced early is announced again with its arguments.
                Some(c) if c.is_running() => c.call = (**s).clone(),
                _ => self.tool_calls.push(ToolCallRecord::started((**s).clone())),
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
            ChatEvent::RoundFinished(_) | ChatEvent::ToolProgress(_) => {}
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
        self.status != MessageStatus::Running
    }

    /// The events this record stands for: the reasoning, each step's start
    /// and end, the text, then the last event if the turn is over (`message_id` names the
    /// stored reply in `done` and `cancelled`). Documents are not repeated
    /// here: whoever replays a turn knows whether its edit is still current.
    pub fn events(&self, message_id: &str) -> Vec<ChatEvent> {
        let mut out = Vec::with_capacity(self.tool_calls.len() * 2 + 3);
        if !self.reasoning.is_empty() {
            out.push(ChatEvent::Reasoning(TextData { content: self.reasoning.clone() }));
        }
        for c in &self.tool_calls {
            out.push(ChatEvent::ToolStart(Box::new(c.call.clone())));
            if let Some(end) = c.end_event() {
                out.push(ChatEvent::ToolEnd(Box::new(end)));
            }
        }
        if !self.text.is_empty() {
            out.push(ChatEvent::Text(TextData { content: self.text.clone() }));
        }
        if self.is_over() {
            out.push(terminal_event(self.status, self.error.clone(), message_id));
        }
        out
    }
}

/// The code of the error a turn ends with when the server, not the teacher
/// or the provider, stopped it.
pub const INTERRUPTED: &str = "interrupted";

/// The last event of a turn that ended with `status`: `done`, `cancelled`,
/// or `error` (with `error`, or one saying the reply did not finish, also for
/// a turn still marked running that no process runs any more).
pub fn terminal_event(status: MessageStatus, error: Option<ErrorData>, message_id: &str) -> ChatEvent {
    let done = || DoneData { message_id: message_id.to_string() };
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
mod stored {
    use serde::{Deserialize, Serialize};

    use crate::{
        chat::{
                    events::{ToolArgs, ToolStartData, ToolStatus},
            proposal::ProposalMark,
        },
        lesson::Change,
    };

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Step {
        id: String,
        tool: String,
        args: ToolArgs,
        display_text: String,
        status: ToolStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revision: Option<i64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changes: Vec<Change>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proposal: Option<ProposalMark>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        replies: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        actions: Vec<String>,
    }

    impl From<Step> for super::ToolCallRecord {
        fn from(s: Step) -> Self {
            let call = ToolStartData { id: s.id, tool: s.tool, args: s.args, display_text: s.display_text };
            Self {
                call,
                status: s.status,
                error: s.error,
                summary: s.summary,
                revision: s.revision,
                changes: s.changes,
                proposal: s.proposal,
                output: s.output,
                replies: s.replies,
                actions: s.actions,
                running: false,
            }
        }
    }

    impl From<super::ToolCallRecord> for Step {
        fn from(r: super::ToolCallRecord) -> Self {
            let ToolStartData { id, tool, args, display_text } = r.call;
            Self {
                id,
                tool,
                args,
                display_text,
                status: r.status,
                error: r.error,
                summary: r.summary,
                revision: r.revision,
                changes: r.changes,
                proposal: r.proposal,
                output: r.output,
                replies: r.replies,
                actions: r.actions,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::events::{ToolArgs, UsageData};

    fn start(id: &str, tool: &str, args: &str, label: &str) -> ChatEvent {
        ChatEvent::ToolStart(Box::new(ToolStartData {
            id: id.into(),
            tool: tool.into(),
            args: ToolArgs::from_model(args),
            display_text: label.into(),
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
            ChatEvent::Done(DoneData { message_id: "m1".into() }),
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
        assert_eq!(r.events("m1").last(), Some(&ChatEvent::Done(DoneData { message_id: "m1".into() })));
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
        let e = |status, error| terminal_event(status, error, "m");
        assert_eq!(e(MessageStatus::Complete, None), ChatEvent::Done(DoneData { message_id: "m".into() }));
        assert_eq!(e(MessageStatus::Cancelled, None), ChatEvent::Cancelled(DoneData { message_id: "m".into() }));
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
        });
        next.end(&ToolEndData {
            output: Some("Shown.".into()),
            replies: vec!["Again".into()],
            actions: vec!["print_key".into()],
            ..ToolEndData::bare("n".into(), ToolStatus::Success)
        });
        r.tool_calls.push(next);
        r.tool_calls[1].proposal = Some(ProposalMark {
            id: "p1".into(),
            status: crate::chat::proposal::ProposalStatus::Discarded,
            revision: None,
            reason: Some("Too long".into()),
        });
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
        assert_eq!(json, r#"{"id":"a","tool":"load_skill","args":{"skill":"fill-blanks"},"displayText":"Checking fill-blanks rules","status":"success"}"#);
        let back: ToolCallRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r.tool_calls[0]);
        // A step saved while it ran reads back as one that did not finish.
        let mut running = TurnRecord::default();
        running.apply(&start("x", "t", "{}", "T"));
        let json = serde_json::to_string(&running.tool_calls).unwrap();
        let back: Vec<ToolCallRecord> = serde_json::from_str(&json).unwrap();
        assert!(!back[0].is_running() && back[0].error.as_deref() == Some(DID_NOT_FINISH), "{json}");
    }
}
