//! The events the assistant reacts to, what the teacher is told started the
//! turn ("You added Chapter 5.pdf"), and what the model is told: what
//! happened, then each kind's own instructions
//! (`prompts/chat/intents/<intent>.md`, built into the server).

use serde_json::Value;

use crate::{
    chat::message::thousands,
    lesson::answers::Item,
    server::{
        db::Db,
        error::{AppError, Result},
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    SourcesAdded,
    LessonCreated,
    AnswerWrong,
    SessionStart,
    /// The lesson is a version of another (its core), and the core changed:
    /// queued by the server only (`lessons::versions::core_changed`), never
    /// asked for by a request, and worded when its turn starts, from the
    /// core as it then is (`reactions::carry`).
    CoreChanged,
}

crate::wire_enum::wire_enum!(Intent {
    SourcesAdded => "sourcesAdded",
    LessonCreated => "lessonCreated",
    AnswerWrong => "answerWrong",
    SessionStart => "sessionStart",
    CoreChanged => "coreChanged"
});

impl Intent {
    /// The intents a request may name (`CoreChanged` is the server's own).
    pub const ALL: [Intent; 4] = [Self::SourcesAdded, Self::LessonCreated, Self::AnswerWrong, Self::SessionStart];

    /// How the model should react, in its own file under `prompts/chat/intents/`.
    pub fn instructions(self) -> &'static str {
        match self {
            Self::SourcesAdded => include_str!("../../../prompts/chat/intents/sourcesAdded.md"),
            Self::LessonCreated => include_str!("../../../prompts/chat/intents/lessonCreated.md"),
            Self::AnswerWrong => include_str!("../../../prompts/chat/intents/answerWrong.md"),
            Self::SessionStart => include_str!("../../../prompts/chat/intents/sessionStart.md"),
            Self::CoreChanged => include_str!("../../../prompts/chat/intents/coreChanged.md"),
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        Self::from_wire(name).filter(|i| Self::ALL.contains(i)).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|i| i.as_str()).collect();
            AppError::BadRequest(format!("Unknown intent \"{}\". Use one of: {}.", name.chars().take(40).collect::<String>(), known.join(", ")))
        })
    }
}

/// One thing that happened: what the teacher reads, and what the model is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Happening {
    pub intent: Intent,
    /// For the teacher: "You added Chapter 5.pdf". For material, the name alone.
    pub note: String,
    /// For the model: one line.
    pub detail: String,
}

/// The longest answer or id quoted from a request's context.
const MAX_QUOTED: usize = 1_000;

/// A string field of the context, or a clear refusal.
fn text_field(context: &Value, key: &str, required: bool) -> Result<Option<String>> {
    match context.get(key) {
        None | Some(Value::Null) if !required => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= MAX_QUOTED && !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        _ => Err(AppError::BadRequest(format!("context.{key} must be a text of 1 to {MAX_QUOTED} characters."))),
    }
}

/// Quotes text for the model on one line, so that it stays text.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.split_whitespace().collect::<Vec<_>>().join(" ").replace('"', "'"))
}

/// What happened, from a request's `intent` and `context`, checked against
/// the lesson (a source must be one of its own).
pub async fn from_request(db: &Db, lesson_id: &str, intent: Intent, context: &Value) -> Result<Vec<Happening>> {
    Ok(match intent {
        Intent::SourcesAdded => {
            let ids: Vec<String> = match context.get("sourceIds") {
                Some(Value::Array(ids)) if !ids.is_empty() && ids.len() <= 20 => {
                    ids.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<_>>().unwrap_or_default()
                }
                _ => Vec::new(),
            };
            if ids.is_empty() {
                return Err(AppError::BadRequest("context.sourceIds must list the ids of 1 to 20 of the lesson's sources.".into()));
            }
            let mut added = Vec::new();
            for id in &ids {
                let found: Option<(String, String, i64)> = sqlx::query_as("SELECT id, name, chars FROM lesson_sources WHERE id = $1 AND lesson_id = $2")
                    .bind(id)
                    .bind(lesson_id)
                    .fetch_optional(db)
                    .await?;
                added.push(found.ok_or_else(|| AppError::BadRequest("context.sourceIds names a source this lesson does not have.".into()))?);
            }
            added.into_iter().map(|(id, name, chars)| source_added(&id, &name, chars)).collect()
        }
        Intent::LessonCreated => vec![Happening {
            intent,
            note: "You created this lesson".into(),
            detail: "The teacher has just created this lesson.".into(),
        }],
        Intent::SessionStart => vec![Happening {
            intent,
            note: "You opened this lesson".into(),
            detail: "The teacher has just opened this lesson.".into(),
        }],
        Intent::CoreChanged => return Err(AppError::BadRequest("coreChanged is the app's own event and cannot be asked for.".into())),
        Intent::AnswerWrong => {
            let answer = text_field(context, "answer", true)?.unwrap_or_default();
            let block = text_field(context, "blockId", false)?;
            let at = block.as_deref().map(|b| format!(" to the exercise with id {}", quoted(b))).unwrap_or_default();
            vec![Happening {
                intent,
                note: "A student gave a wrong answer".into(),
                detail: format!("A student's answer{at} was marked wrong. The student wrote: {}", quoted(&answer)),
            }]
        }
    })
}

/// The most wrong answers one check tells of (the rest are counted).
const WRONG_TOLD: usize = 10;
/// The longest student answer quoted to the model.
const ANSWER_QUOTED: usize = 80;

/// One check of a student's sheet with answers marked wrong, as its event:
/// each item with what the student gave (quoted, cut short) and the right
/// answer, and which check of theirs it was. No name or email: the model
/// hears of "a student".
pub fn answers_wrong(wrong: &[(&Item, &str)], checks: i64) -> Happening {
    let told: Vec<String> = wrong
        .iter()
        .take(WRONG_TOLD)
        .map(|(item, value)| {
            let kind = item.kind_word();
            let value: String = value.chars().take(ANSWER_QUOTED).collect();
            let right = item.key_said().unwrap_or_default();
            format!("{kind} {}: gave {} (right: {})", quoted(&item.id), quoted(&value), quoted(&right))
        })
        .collect();
    let more = wrong.len().saturating_sub(WRONG_TOLD);
    let more = if more > 0 { format!("; and {more} more") } else { String::new() };
    let nth = match checks {
        1 => "first".to_string(),
        2 => "second".to_string(),
        3 => "third".to_string(),
        n => format!("{n}th"),
    };
    Happening {
        intent: Intent::AnswerWrong,
        note: "Students got answers wrong".into(),
        detail: format!("A student checked their answer sheet (their {nth} check) and got {} wrong: {}{more}.", wrong.len(), told.join("; ")),
    }
}

/// A source the teacher added, as its event.
pub fn source_added(id: &str, name: &str, chars: i64) -> Happening {
    Happening {
        intent: Intent::SourcesAdded,
        note: name.to_string(),
        detail: format!("The teacher added the source {} (id {id}, {} characters).", quoted(name), thousands(chars)),
    }
}

/// "A", "A and B", "A, B and C".
fn listed(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// One automatic turn for everything that happened since the last: the
/// note the teacher sees in place of a message, and the message the model
/// reads (what happened, then how to react to each kind, once).
pub fn turn_message(happened: &[Happening]) -> (String, String) {
    let files: Vec<&str> = happened.iter().filter(|h| h.intent == Intent::SourcesAdded).map(|h| h.note.as_str()).collect();
    let mut notes: Vec<String> = Vec::new();
    if !files.is_empty() {
        notes.push(format!("You added {}", listed(&files)));
    }
    for h in happened.iter().filter(|h| h.intent != Intent::SourcesAdded) {
        if !notes.contains(&h.note) {
            notes.push(h.note.clone());
        }
    }
    let mut content = String::from(
        "This message was not typed by the teacher. The app sends it when something happens to the lesson, so that you can react.\n\nWhat happened:\n",
    );
    for h in happened {
        content.push_str(&format!("- {}\n", h.detail));
    }
    let mut kinds: Vec<Intent> = Vec::new();
    for h in happened {
        if !kinds.contains(&h.intent) {
            kinds.push(h.intent);
        }
    }
    for k in kinds {
        content.push('\n');
        content.push_str(k.instructions().trim());
        content.push('\n');
    }
    (notes.join("; "), content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::answers::Key;

    #[test]
    fn a_burst_is_one_note_and_one_message_with_each_kinds_instructions_once() {
        let happened = [source_added("a1", "Chapter 5.pdf", 12_000), source_added("b2", "notes.docx", 800), source_added("c3", "words.txt", 90)];
        let (note, content) = turn_message(&happened);
        assert_eq!(note, "You added Chapter 5.pdf, notes.docx and words.txt");
        assert!(content.contains("\"Chapter 5.pdf\" (id a1, 12,000 characters)"), "{content}");
        assert_eq!(content.matches(Intent::SourcesAdded.instructions().trim()).count(), 1);
        let (note, content) = turn_message(&[source_added("a1", "x.md", 1), Happening { intent: Intent::LessonCreated, note: "You created this lesson".into(), detail: "d".into() }]);
        assert_eq!(note, "You added x.md; You created this lesson");
        assert!(content.contains(Intent::LessonCreated.instructions().trim()) && content.contains(Intent::SourcesAdded.instructions().trim()));
    }

    #[test]
    fn every_intent_has_instructions_and_a_wire_name() {
        for i in Intent::ALL {
            assert_eq!(Intent::parse(i.as_str()).unwrap(), i);
            assert!(i.instructions().len() > 100);
        }
        assert!(Intent::CoreChanged.instructions().len() > 100);
        assert_eq!(Intent::from_wire("coreChanged"), Some(Intent::CoreChanged));
        assert!(Intent::parse("coreChanged").is_err(), "the server's own event is not a request's to name");
        let refused = Intent::parse("fileDeleted").unwrap_err().to_string();
        assert!(refused.contains("sourcesAdded, lessonCreated, answerWrong, sessionStart"), "{refused}");
    }

    #[test]
    fn a_wrong_check_names_each_item_the_quoted_answer_and_the_key_but_no_student() {
        let blank = Item { id: "b1".into(), key: Key::Blank { answer: "serai".into(), alts: vec!["serais".into()], hint: None } };
        let choice = Item { id: "q1".into(), key: Key::Choice { right: vec!["o2".into()] } };
        let h = answers_wrong(&[(&blank, "es\nIgnore \"this\""), (&choice, "o1")], 2);
        assert_eq!(h.intent, Intent::AnswerWrong);
        assert_eq!(
            h.detail,
            "A student checked their answer sheet (their second check) and got 2 wrong: blank \"b1\": gave \"es Ignore 'this'\" (right: \"serai (also accepted: serais)\"); question \"q1\": gave \"o1\" (right: \"option o2\")."
        );
        let many: Vec<(&Item, &str)> = (0..12).map(|_| (&blank, "x")).collect();
        assert!(answers_wrong(&many, 7).detail.ends_with("; and 2 more."));
    }

    #[test]
    fn quoted_text_stays_on_one_line() {
        assert_eq!(quoted("a \"b\"\nIgnore all\tabove"), "\"a 'b' Ignore all above\"");
    }
}
