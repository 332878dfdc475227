//! A turn's record as it is stored and shown again later: the steps the agent
//! took and how each ended.

use serde::{Deserialize, Serialize};
use super::events::{ToolArgs, ToolStatus};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    pub id: String,
    pub tool: String,
    pub args: ToolArgs,
    pub display_text: String,
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl ToolCallRecord {
    /// One step in a few words, e.g. `load_skill fill-blanks ✓` or
    /// `edit_document ✓ Added a verb exercise`.
    pub fn brief(&self) -> String {
        let mark = match self.status {
            ToolStatus::Success => "✓",
            ToolStatus::Error => "✗",
        };
        let subject = match self.tool.as_str() {
            "load_skill" => self.args.brief().skill.map(|s| format!(" {s}")),
            _ => None,
        }
        .unwrap_or_default();
        let detail = match (&self.status, self.tool.as_str(), &self.summary) {
            (ToolStatus::Success, "edit_document", Some(s)) => format!(" {s}"),
            (ToolStatus::Error, _, _) => " (failed)".to_string(),
            _ => String::new(),
        };
        format!("{}{subject} {mark}{detail}", self.tool)
    }
}

/// The one-line account of a turn's steps that later turns see instead of the
/// raw tool calls, e.g. `steps: load_skill fill-blanks ✓; edit_document ✓ Added a verb exercise`.
pub fn steps_line(calls: &[ToolCallRecord]) -> Option<String> {
    if calls.is_empty() {
        return None;
    }
    Some(format!("steps: {}", calls.iter().map(ToolCallRecord::brief).collect::<Vec<_>>().join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_as_one_line() {
        let calls = vec![
            ToolCallRecord {
                id: "a".into(),
                tool: "load_skill".into(),
                args: ToolArgs::from_model(r#"{"skill":"fill-blanks"}"#),
                display_text: "Checking fill-blanks rules".into(),
                status: ToolStatus::Success,
                error: None,
                summary: Some("Fill in the blanks".into()),
            },
            ToolCallRecord {
                id: "b".into(),
                tool: "edit_document".into(),
                args: ToolArgs::empty(),
                display_text: "Editing document".into(),
                status: ToolStatus::Success,
                error: None,
                summary: Some("Added a verb exercise".into()),
            },
        ];
        assert_eq!(steps_line(&calls).unwrap(), "steps: load_skill fill-blanks ✓; edit_document ✓ Added a verb exercise");
        assert_eq!(steps_line(&[]), None);
    }
}

/// The body of `POST /api/chat/stream`: the teacher's message to a chat.
/// (Older clients also sent `documentXml`; it is ignored: the stored lesson
/// is always the one the agent works on.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnRequest {
    pub session_id: String,
    pub content: String,
}

/// The body of a new chat (optional) and of a rename.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TitleRequest {
    #[serde(default)]
    pub title: String,
}

/// A conversation about one lesson.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatSession {
    pub id: String,
    pub lesson_id: String,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// Where a message stands. User messages are always `Complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    Running,
    Complete,
    Error,
    Interrupted,
    Cancelled,
}

impl MessageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Error => "error",
            Self::Interrupted => "interrupted",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "running" => Self::Running,
            "error" => Self::Error,
            "interrupted" => Self::Interrupted,
            "cancelled" => Self::Cancelled,
            _ => Self::Complete,
        }
    }
}

/// One stored message, as the sidebar shows it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    pub id: String,
    pub role: Role,
    pub content: String,
    pub tool_calls: Vec<ToolCallRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_xml: Option<String>,
    pub status: MessageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<super::events::ErrorData>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub usage: super::events::UsageData,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub created_at: String,
}

/// What the sidebar needs to know about the assistant.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AiStatus {
    pub provider: String,
    pub model: String,
    /// The offline scripted model is in use.
    pub demo: bool,
    pub ready: bool,
    /// Why the assistant cannot work, and what to configure.
    pub message: Option<String>,
}

/// A session's messages, and the turn still running in it, if any.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessages {
    pub messages: Vec<ChatMessage>,
    pub running_turn_id: Option<String>,
}

/// The name a new chat gets until someone renames it.
pub const DEFAULT_CHAT_TITLE: &str = "New chat";

/// A chat's name taken from its first message: its first words, up to 48
/// characters, never cut inside a word (unless the first word alone is longer).
pub fn title_from(text: &str) -> String {
    const MAX: usize = 48;
    let mut title = String::new();
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.next() {
        let needed = title.chars().count() + usize::from(!title.is_empty()) + word.chars().count();
        if needed > MAX {
            if title.is_empty() {
                title = word.chars().take(MAX).collect();
            }
            return format!("{title}…");
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
        if words.peek().is_none() {
            return title;
        }
    }
    if title.is_empty() { DEFAULT_CHAT_TITLE.into() } else { title }
}

#[cfg(test)]
mod title_tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_words() {
        assert_eq!(title_from("  Add a\nquiz  "), "Add a quiz");
        assert_eq!(title_from(&"word ".repeat(20)), format!("{}…", "word ".repeat(9).trim_end()));
        assert_eq!(title_from(&"x".repeat(60)), format!("{}…", "x".repeat(48)));
        assert_eq!(title_from("   "), "New chat");
    }
}
