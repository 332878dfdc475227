//! Chats and their messages as stored and shown again later, and the bodies
//! of the chat API's requests.
//!
//! One cohesive thing (a little over 400 lines): the stored message in its
//! shapes for the model, the sidebar and the wire.

pub use super::turn::MessageStatus;
use serde::{Deserialize, Serialize};

pub use super::turn::ToolCallRecord;
use super::{json_fields::string_field, turn::TurnRecord};

/// The body of `POST /api/chat/stream`: the teacher's message to a chat.
/// (Older clients also sent `documentXml`; it is ignored: the stored lesson
/// is always the one the agent works on.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRequest {
    pub session_id: String,
    pub content: String,
    /// Run the chat's last question again, in place of its reply that did
    /// not finish (`content` is then not used).
    #[serde(default, skip_serializing_if = "is_false")]
    pub retry: bool,
    /// What travels with the message: the lesson text the teacher asked
    /// about. (A `trigger` sent by a client is refused: only the server
    /// starts automatic turns.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Attachments>,
}

/// What travels with a message besides its text, stored with it as JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachments {
    /// What started an automatic turn, in the teacher's words ("You added
    /// Chapter 5.pdf"). The sidebar shows it in place of a message bubble;
    /// only the server sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Lesson text the teacher selected and asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_text: Option<SelectedText>,
}

/// A selection in the lesson, and the block (`data-id`) it is in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectedText {
    pub text: String,
    #[serde(default)]
    pub block_id: String,
}

impl SelectedText {
    /// As one line of text, `blockId` TAB `text` (a block id has no tab):
    /// how the lesson page holds a selection until it is sent, in a signal
    /// of a type the bundle already has code for.
    pub fn packed(&self) -> String {
        format!("{}\t{}", self.block_id, self.text)
    }

    pub fn unpacked(packed: &str) -> Self {
        let (block_id, text) = packed.split_once('\t').unwrap_or(("", packed));
        Self { text: text.to_string(), block_id: block_id.to_string() }
    }
}

/// Longest selection a message can carry, in characters.
pub const MAX_SELECTION_CHARS: usize = 4_000;

impl Attachments {
    /// JSON for the database; `None` when there is nothing to keep.
    pub fn stored(&self) -> Option<String> {
        (self.trigger.is_some() || self.selected_text.is_some()).then(|| serde_json::to_string(self).unwrap_or_default())
    }

    /// Read back from the database (anything unreadable: none).
    pub fn read(json: Option<&str>) -> Option<Self> {
        json.and_then(|j| serde_json::from_str(j).ok())
    }

    /// The same fields read by hand from the server's JSON, as the browser
    /// does: a derived reader for these two small types costs the bundle
    /// more than the hand reader it already has (`json_fields`).
    pub fn from_json(json: &str) -> Self {
        Self {
            trigger: string_field(json, "trigger"),
            selected_text: string_field(json, "text").map(|text| SelectedText { text, block_id: string_field(json, "blockId").unwrap_or_default() }),
        }
    }

    #[cfg(feature = "hydrate")]
    fn read_in_browser<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        let raw = Option::<Box<serde_json::value::RawValue>>::deserialize(d)?;
        Ok(raw.map(|r| Self::from_json(r.get())))
    }
}

/// A teacher's message as the model reads it: with the selection it asks
/// about above it, marked as the teacher's and quoted as lesson text, so
/// that instructions inside it stay text.
pub fn model_text(content: &str, attachments: Option<&Attachments>) -> String {
    let Some(sel) = attachments.and_then(|a| a.selected_text.as_ref()) else {
        return content.to_string();
    };
    let quoted: String = sel.text.lines().map(|l| format!("> {l}\n")).collect();
    let block = if sel.block_id.is_empty() { String::new() } else { format!(" (in the block with id \"{}\")", sel.block_id) };
    format!("The teacher selected this text in the lesson{block} and asks about it:\n{quoted}\n{content}")
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The body of a new chat (optional) and of a rename.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TitleRequest {
    #[serde(default)]
    pub title: String,
}

/// A conversation about one lesson.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
#[serde(rename_all = "camelCase")]
pub struct ChatSession {
    pub id: String,
    // The sidebar shows a chat's name only; the browser skips the rest (as
    // it does below wherever a field is not shown): a smaller deserialiser.
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub lesson_id: String,
    pub title: String,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub created_at: String,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub updated_at: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One stored message, as the sidebar shows it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    pub id: String,
    pub role: Role,
    pub content: String,
    /// What a reasoning model thought (shown as "Thinking").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    pub tool_calls: Vec<ToolCallRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub document_xml: Option<String>,
    pub status: MessageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<super::events::ErrorData>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub model: Option<String>,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub usage: super::events::UsageData,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub created_at: String,
    /// For a teacher's message: what started it, or what it asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "hydrate", serde(deserialize_with = "Attachments::read_in_browser"))]
    pub attachments: Option<Attachments>,
    /// For a reply: how many rounds (model calls) it took.
    #[serde(default)]
    pub rounds: u32,
}

/// What the sidebar needs to know about the assistant.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AiStatus {
    // The sidebar reads only `demo` and `message`: the browser skips the
    // rest, which keeps its deserialiser (and the bundle) smaller.
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub provider: String,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub model: String,
    /// The offline scripted model is in use.
    pub demo: bool,
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub ready: bool,
    /// Why the assistant cannot work, and what to configure.
    pub message: Option<String>,
    /// `admin` or `teacher`: an admin is offered "Add credits".
    #[serde(default)]
    pub role: String,
    /// The school's budget this month; `None` before sign-in.
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    #[serde(default)]
    pub usage: Option<UsageSummary>,
    /// The meter's sentence ("12,400 of 200,000 tokens used this month");
    /// `None` when the allowance is unlimited.
    #[serde(default)]
    pub meter: Option<String>,
    /// Set when the budget is spent: why the assistant cannot be asked now.
    #[serde(default)]
    pub blocked: Option<String>,
}

/// Where a school's AI budget stands this month.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct UsageSummary {
    /// Tokens taken from this month's allowance.
    pub used: i64,
    /// The month's allowance; `None`: unlimited.
    pub allowance: Option<i64>,
    /// Credits left (they do not expire).
    pub credits: i64,
    /// What is left of the allowance plus the credits; `None`: unlimited.
    pub remaining: Option<i64>,
    /// When the allowance comes back (the first moment of next month).
    pub resets_at: String,
    /// The same in words: "1 December".
    #[serde(default)]
    pub reset_day: String,
}

impl UsageSummary {
    /// The meter's sentence, or `None` when unlimited.
    pub fn meter(&self) -> Option<String> {
        let allowance = self.allowance?;
        let mut s = format!("{} of {} tokens used this month", thousands(self.used.min(allowance)), thousands(allowance));
        if self.credits > 0 {
            s.push_str(&format!(", {} credits left", thousands(self.credits)));
        }
        Some(s)
    }

    /// Why nothing can be asked now, or `None` while budget is left.
    pub fn blocked(&self) -> Option<String> {
        (self.remaining? <= 0).then(|| budget_spent(&self.reset_day))
    }
}

impl AiStatus {
    /// The fields the sidebar shows, read from the server's JSON by hand:
    /// the browser has no derived reader for this type, which keeps the
    /// bundle smaller (the server writes flat fields; `usage` is not read).
    pub fn from_json(json: &str) -> Self {
        Self {
            demo: json.contains("\"demo\":true"),
            message: string_field(json, "message"),
            role: string_field(json, "role").unwrap_or_default(),
            meter: string_field(json, "meter"),
            blocked: string_field(json, "blocked"),
            ..Self::default()
        }
    }
}

/// What a teacher reads when the school's budget is spent; `reset_day` is
/// "1 December".
pub fn budget_spent(reset_day: &str) -> String {
    format!("Your school's AI allowance for this month is used up. It resets on {reset_day}.")
}

/// Why an account cannot ask the assistant when its own share of the
/// school's budget is spent.
pub fn share_spent(reset_day: &str) -> String {
    format!("Your share of your school's AI for this month is used up. It comes back on {reset_day}.")
}

/// 12400 → "12,400".
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl ChatMessage {
    /// The turn this reply recorded (for a teacher's message, an empty one).
    pub fn record(&self) -> TurnRecord {
        TurnRecord {
            text: self.content.clone(),
            reasoning: self.reasoning.clone(),
            tool_calls: self.tool_calls.clone(),
            document_xml: self.document_xml.clone(),
            status: self.status,
            error: self.error.clone(),
            usage: self.usage,
            rounds: self.rounds,
        }
    }
}

/// An earlier message of a chat as a new turn is given it: what the teacher
/// wrote, or the record of a reply.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredMessage {
    User(String),
    Assistant(TurnRecord),
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

/// Longest chat name kept, in characters; a longer one typed in is cut here.
pub const MAX_CHAT_TITLE_CHARS: usize = 120;

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

crate::wire_enum::wire_enum!(Role { User => "user", Assistant => "assistant" });

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn the_status_is_read_by_hand_as_the_server_writes_it() {
        let sent = AiStatus {
            provider: "demo".into(),
            model: "m".into(),
            demo: true,
            ready: true,
            message: Some("Say \"hi\"\nand \\ go — ✓ ok".into()),
            role: "admin".into(),
            usage: Some(UsageSummary { used: 5, allowance: Some(10), credits: 0, remaining: Some(5), resets_at: "x".into(), reset_day: "1 May".into() }),
            meter: Some("5 of 10 tokens used this month".into()),
            blocked: None,
        };
        let read = AiStatus::from_json(&serde_json::to_string(&sent).unwrap());
        assert_eq!((read.demo, read.message, read.role, read.meter, read.blocked), (true, sent.message, sent.role, sent.meter, None));
        let control = AiStatus::from_json(r#"{"demo":false,"message":"a\u0001b","blocked":"spent"}"#);
        assert_eq!((control.demo, control.message.as_deref(), control.blocked.as_deref()), (false, Some("a\u{1}b"), Some("spent")));
    }
}

#[cfg(test)]
mod attachment_tests {
    use super::*;

    #[test]
    fn the_browsers_hand_reader_gives_what_the_server_wrote() {
        let sent = [
            Attachments { trigger: Some("You added \"Ch 5\".pdf and notes\\n.docx".into()), selected_text: None },
            Attachments { trigger: None, selected_text: Some(SelectedText { text: "Line one\nsays \"trigger\": no".into(), block_id: "b2".into() }) },
            Attachments { trigger: None, selected_text: Some(SelectedText { text: "no block".into(), block_id: String::new() }) },
        ];
        for a in sent {
            assert_eq!(Attachments::from_json(&serde_json::to_string(&a).unwrap()), a);
        }
    }

    #[test]
    fn a_selection_packs_into_one_line_and_back() {
        let s = SelectedText { text: "a\tb\nc".into(), block_id: "b-1".into() };
        assert_eq!(SelectedText::unpacked(&s.packed()), s);
        let none = SelectedText { text: "x".into(), block_id: String::new() };
        assert_eq!(SelectedText::unpacked(&none.packed()), none);
    }

    #[test]
    fn the_model_reads_the_selection_quoted_above_the_message() {
        let a = Attachments { trigger: None, selected_text: Some(SelectedText { text: "One\nTwo".into(), block_id: "b1".into() }) };
        assert_eq!(model_text("Why?", Some(&a)), "The teacher selected this text in the lesson (in the block with id \"b1\") and asks about it:\n> One\n> Two\n\nWhy?");
        assert_eq!(model_text("Why?", None), "Why?");
    }
}
