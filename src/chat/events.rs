//! Events of one chat turn. On the wire each is an SSE event whose `event:` is
//! [`ChatEvent::name`] and whose `data:` is the JSON of its payload, e.g.
//!
//! ```text
//! event: tool_start
//! id: 3
//! data: {"id":"call_1","tool":"load_skill","args":{"skill":"fill-blanks"},"displayText":"Checking fill-blanks rules","roundIndex":1}
//! ```
//!
//! `roundIndex` (from 1) names the model call an event belongs to: a turn
//! is rounds of one model call each, and the tool calls it asked for.

use serde::{Deserialize, Serialize};

pub use super::tool_args::ToolArgs;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum ChatEvent {
    // The larger payloads are boxed: events are queued and kept for every
    // running turn, and an enum is as large as its largest variant.
    /// A piece of the reply's markdown.
    Text(TextData),
    /// A piece of the model's reasoning (reasoning models only), shown in
    /// the "Thinking" section above the reply.
    Reasoning(TextData),
    /// A tool call has started: said once per call, as soon as its name is
    /// in (its arguments may still be streaming, and are `{}` then).
    ToolStart(Box<ToolStartData>),
    /// A tool call's arguments are complete, just before it runs (once per
    /// call, after its `tool_start`; a round's calls all say theirs before
    /// the first of them runs). The payload is `tool_start`'s, with the
    /// arguments and the label they give.
    ToolInput(Box<ToolStartData>),
    /// A tool call has finished.
    ToolEnd(Box<ToolEndData>),
    /// A tool call under way says how far it has come (shown under its
    /// spinner); not kept once the call ends.
    ToolProgress(Box<ToolProgressData>),
    /// An edit was held for the teacher's review and the turn waits for
    /// their decision (Apply or Discard), which the agent then reads as
    /// the call's result and goes on.
    AwaitingApproval(Box<AwaitingData>),
    /// A round's text is complete: all of it, once.
    AssistantTextDone(Box<TextDoneData>),
    /// One model call is over (the agent may call the model again).
    RoundFinished(RoundData),
    /// Tokens used so far in this turn.
    Usage(UsageData),
    /// Said to one reader only, never kept in the turn: something about its
    /// stream (`slow_reader`: it fell so far behind a running reply that the
    /// text it missed comes merged). Carries no event number.
    Warning(Box<ErrorData>),
    /// The turn ended normally; always last.
    Done(DoneData),
    /// The turn was stopped by the teacher; always last.
    Cancelled(DoneData),
    /// The turn failed; always last.
    Error(Box<ErrorData>),
}

impl ChatEvent {
    /// The SSE `event:` name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Text(_) => "text",
            Self::Reasoning(_) => "reasoning",
            Self::ToolStart(_) => "tool_start",
            Self::ToolInput(_) => "tool_input",
            Self::ToolEnd(_) => "tool_end",
            Self::ToolProgress(_) => "tool_progress",
            Self::AssistantTextDone(_) => "assistant_text_done",
            Self::AwaitingApproval(_) => "awaiting_approval",
            Self::RoundFinished(_) => "round_finished",
            Self::Usage(_) => "usage",
            Self::Warning(_) => "warning",
            Self::Done(_) => "done",
            Self::Cancelled(_) => "cancelled",
            Self::Error(_) => "error",
        }
    }

    /// The SSE `data:` JSON, fields in their declared order.
    pub fn data_json(&self) -> String {
        let json = match self {
            Self::Text(d) | Self::Reasoning(d) => serde_json::to_string(d),
            Self::ToolStart(d) | Self::ToolInput(d) => serde_json::to_string(d),
            Self::ToolEnd(d) => serde_json::to_string(d),
            Self::ToolProgress(d) => serde_json::to_string(d),
            Self::AssistantTextDone(d) => serde_json::to_string(d),
            Self::AwaitingApproval(d) => serde_json::to_string(d),
            Self::RoundFinished(d) => serde_json::to_string(d),
            Self::Usage(d) => serde_json::to_string(d),
            Self::Done(d) | Self::Cancelled(d) => serde_json::to_string(d),
            Self::Error(d) | Self::Warning(d) => serde_json::to_string(d),
        };
        json.unwrap_or_else(|_| "{}".into())
    }

    /// Reads an event back from its SSE name and data.
    /// Each payload is read straight from its text: going through a
    /// `serde_json::Value` and the tagged enum would compile a second
    /// deserialiser for every payload into the browser bundle.
    pub fn from_sse(name: &str, data: &str) -> Result<Self, String> {
        fn read<T: serde::de::DeserializeOwned>(name: &str, data: &str) -> Result<T, String> {
            serde_json::from_str(data).map_err(|e| format!("malformed event `{name}`: {e}"))
        }
        Ok(match name {
            "text" => Self::Text(read(name, data)?),
            "reasoning" => Self::Reasoning(read(name, data)?),
            "tool_start" => Self::ToolStart(read(name, data)?),
            "tool_input" => Self::ToolInput(read(name, data)?),
            "tool_end" => Self::ToolEnd(read(name, data)?),
            "tool_progress" => Self::ToolProgress(Box::new(ToolProgressData::from_json(data).ok_or_else(|| format!("malformed event `{name}`"))?)),
            "assistant_text_done" => Self::AssistantTextDone(read(name, data)?),
            "awaiting_approval" => Self::AwaitingApproval(read(name, data)?),
            "round_finished" => Self::RoundFinished(read(name, data)?),
            "usage" => Self::Usage(read(name, data)?),
            "warning" => Self::Warning(read(name, data)?),
            "done" => Self::Done(read(name, data)?),
            "cancelled" => Self::Cancelled(read(name, data)?),
            "error" => Self::Error(read(name, data)?),
            _ => return Err(format!("unknown event `{name}`")),
        })
    }

    /// The round an event belongs to, for those that say (0: none given).
    pub fn round_index(&self) -> Option<u32> {
        match self {
            Self::Text(t) | Self::Reasoning(t) => Some(t.round_index),
            Self::ToolStart(s) | Self::ToolInput(s) => Some(s.round_index),
            Self::ToolEnd(e) => Some(e.round_index),
            Self::ToolProgress(p) => Some(p.round_index),
            Self::AwaitingApproval(a) => Some(a.round_index),
            Self::AssistantTextDone(d) => Some(d.round_index),
            Self::RoundFinished(r) => Some(r.round),
            Self::Usage(_) | Self::Warning(_) | Self::Done(_) | Self::Cancelled(_) | Self::Error(_) => None,
        }
    }

    /// Whether this event ends the turn.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done(_) | Self::Cancelled(_) | Self::Error(_))
    }

    /// A piece of text outside any round (tests, and text merged for late readers keep the round they had).
    pub fn text(content: impl Into<String>) -> Self {
        Self::Text(TextData { content: content.into(), round_index: 0 })
    }

    /// A piece of the text of round `round`.
    pub fn text_in(round: u32, content: impl Into<String>) -> Self {
        Self::Text(TextData { content: content.into(), round_index: round })
    }

    pub fn error(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Error(Box::new(ErrorData { code: code.into(), message: message.into() }))
    }

    /// What a reader that fell far behind a running reply is told before
    /// the text it missed, merged.
    pub fn slow_reader() -> Self {
        Self::Warning(Box::new(ErrorData {
            code: "slow_reader".into(),
            message: "This page fell behind the reply, so the part it missed comes in one piece.".into(),
        }))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextData {
    pub content: String,
    #[serde(default)]
    pub round_index: u32,
}

/// A held edit the turn waits on: the call (`id`), its proposal and what
/// it would change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AwaitingData {
    pub id: String,
    pub proposal_id: String,
    #[serde(default)]
    pub changes: Vec<crate::lesson::Change>,
    /// The digest a decision on the proposal names (see
    /// [`super::proposal::ProposalMark::digest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// How it may be decided, as its tool says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub decisions: Vec<super::proposal::DecisionKind>,
    #[serde(default)]
    pub round_index: u32,
}

/// The whole text of one round, when it is complete.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDoneData {
    pub full_text: String,
    pub round_index: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStartData {
    pub id: String,
    pub tool: String,
    /// The arguments as the model sent them (a string when they were not JSON).
    pub args: ToolArgs,
    pub display_text: String,
    #[serde(default)]
    pub round_index: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    Success,
    Error,
    /// An edit held for the teacher's review: nothing was saved yet.
    Proposed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEndData {
    pub id: String,
    /// The tool that was called.
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub round_index: u32,
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A one-line account of what the tool did (e.g. the edit's summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The lesson after a successful edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_xml: Option<String>,
    /// That lesson as HTML for both audiences, for the page's lesson view
    /// (the browser does not parse XML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_html: Option<crate::lesson::LessonHtml>,
    /// The revision that edit was stored as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// What an edit changed (or, proposed, would change), in the teacher's words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<crate::lesson::Change>,
    /// The proposal a held edit became (`status: "proposed"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    /// The digest a decision on that proposal names (see
    /// [`super::proposal::ProposalMark::digest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// How that proposal may be decided, as its tool says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub decisions: Vec<super::proposal::DecisionKind>,
    /// What the model was told, as the step's "Details" show it (cut to
    /// [`OUTPUT_SHOWN`] bytes; a failed call's answer is its `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Follow-ups the reply offers the teacher to send with one click
    /// (`suggest_next`), already checked by the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<String>,
    /// Buttons the reply offers that the page runs without the model: the
    /// words of [`super::actions::PageAction`]s (plain words on the wire,
    /// so the browser reads them with the follow-ups' reader).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// The lesson a `create_lesson` call made, for the step's "Open" card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<MadeLesson>,
    /// What the teacher decided about the held edit, on the end said once
    /// a paused reply goes on from the decision (as stored: applied with
    /// its revision, or discarded with the reason). The page learns it
    /// from its own click, so it does not read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub decided: Option<super::proposal::ProposalMark>,
}

/// A lesson the assistant made for the teacher (`create_lesson`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeLesson {
    pub id: String,
    pub title: String,
}

/// How much of a tool's answer to the model a step keeps for its "Details".
pub const OUTPUT_SHOWN: usize = 4_000;

impl ToolEndData {
    /// How a call ended, with nothing else to say yet.
    pub fn bare(id: String, status: ToolStatus) -> Self {
        Self {
            id,
            tool: String::new(),
            round_index: 0,
            status,
            error: None,
            summary: None,
            document_xml: None,
            document_html: None,
            revision: None,
            changes: Vec::new(),
            proposal_id: None,
            digest: None,
            decisions: Vec::new(),
            output: None,
            replies: Vec::new(),
            actions: Vec::new(),
            lesson: None,
            decided: None,
        }
    }
}

/// A tool call's progress: what it is doing, and how far along it is
/// (0 to 1) when that can be told.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolProgressData {
    pub id: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f32>,
    #[serde(default)]
    pub round_index: u32,
}

impl ToolProgressData {
    /// Read by hand (three flat fields): no deserialiser and no float
    /// parser in the browser bundle for it.
    pub fn from_json(json: &str) -> Option<Self> {
        use super::json_fields::{number_field, string_field};
        Some(Self {
            id: string_field(json, "id")?,
            message: string_field(json, "message")?,
            fraction: number_field(json, "fraction"),
            round_index: number_field(json, "roundIndex").map_or(0, |n| n as u32),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundData {
    pub round: u32,
    pub finish_reason: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageData {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoneData {
    pub message_id: String,
    /// The turn's record as it ended (`done` and `cancelled`), as the JSON
    /// turn API answers it too. The browser has built the same record from
    /// the events, so its build does not read it (nor carry the code to).
    #[cfg(not(feature = "hydrate"))]
    #[serde(rename = "final", default, skip_serializing_if = "Option::is_none")]
    pub record: Option<Box<super::turn::TurnFinal>>,
}

impl DoneData {
    /// The end of the turn whose reply is `message_id`, without its record.
    pub fn of(message_id: impl Into<String>) -> Self {
        Self {
            message_id: message_id.into(),
            #[cfg(not(feature = "hydrate"))]
            record: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorData {
    pub message: String,
    pub code: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_and_payloads_follow_the_protocol() {
        let e = ChatEvent::ToolStart(Box::new(ToolStartData {
            id: "call_1".into(),
            tool: "load_skill".into(),
            args: ToolArgs::from_model(r#"{"skill":"fill-blanks"}"#),
            display_text: "Checking fill-blanks rules".into(),
            round_index: 1,
        }));
        assert_eq!(e.name(), "tool_start");
        assert_eq!(
            e.data_json(),
            r#"{"id":"call_1","tool":"load_skill","args":{"skill":"fill-blanks"},"displayText":"Checking fill-blanks rules","roundIndex":1}"#
        );
        assert_eq!(ChatEvent::from_sse(e.name(), &e.data_json()).unwrap(), e);

        let end = ChatEvent::ToolEnd(Box::new(ToolEndData {
            tool: "edit_document".into(),
            round_index: 2,
            error: Some("line 1: bad".into()),
            ..ToolEndData::bare("call_1".into(), ToolStatus::Error)
        }));
        assert_eq!(end.data_json(), r#"{"id":"call_1","tool":"edit_document","roundIndex":2,"status":"error","error":"line 1: bad"}"#);
        assert_eq!(ChatEvent::from_sse(end.name(), &end.data_json()).unwrap(), end);
        assert_eq!(ChatEvent::Done(DoneData::of("m1")).data_json(), r#"{"messageId":"m1"}"#);
        assert_eq!(ChatEvent::error("auth", "No").data_json(), r#"{"message":"No","code":"auth"}"#);
        assert_eq!(ChatEvent::text_in(3, "hi").data_json(), r#"{"content":"hi","roundIndex":3}"#);
        let done = ChatEvent::AssistantTextDone(Box::new(TextDoneData { full_text: "Hello there".into(), round_index: 1 }));
        assert_eq!((done.name(), done.data_json().as_str()), ("assistant_text_done", r#"{"fullText":"Hello there","roundIndex":1}"#));
        assert_eq!(ChatEvent::from_sse(done.name(), &done.data_json()).unwrap(), done);
        let progress = ChatEvent::ToolProgress(Box::new(ToolProgressData { id: "c".into(), message: "1 KB".into(), fraction: Some(0.5), round_index: 2 }));
        assert_eq!(progress.data_json(), r#"{"id":"c","message":"1 KB","fraction":0.5,"roundIndex":2}"#);
        assert_eq!(ChatEvent::from_sse(progress.name(), &progress.data_json()).unwrap(), progress);
    }

    #[test]
    fn an_event_stays_small() {
        // Every running turn queues and keeps its events: a payload larger
        // than a text piece's is boxed.
        assert!(std::mem::size_of::<ChatEvent>() <= 40, "{}", std::mem::size_of::<ChatEvent>());
    }

    #[test]
    fn unknown_or_malformed_events_are_errors() {
        assert!(ChatEvent::from_sse("nope", "{}").is_err());
        assert!(ChatEvent::from_sse("text", "{not json").is_err());
        assert!(ChatEvent::from_sse("text", r#"{"wrong":1}"#).is_err());
    }
}

crate::wire_enum::wire_enum!(ToolStatus { Success => "success", Error => "error", Proposed => "proposed" });
