//! The tools that only read. For both roles: `read_lesson` and
//! `list_lessons` (a teacher's own lessons; for a student, their classes'
//! published lessons, read as students see them). For a student's tutor:
//! `check_my_answer` (right or not for one item, never the right answer)
//! and `give_hint` (the teacher's hint and the item's context).
//!
//! The answer key stays on the server side of `StudentDesk`: tools mark
//! with it, and what they return to the model is only "right", "not right
//! yet" and text a student could already see.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, Tool, ToolContext, ToolOutput};
use crate::lesson::{
    self,
    answers::{self, Key},
    Element,
};

/// What a student's turn may look at besides the lesson in its prompt.
pub trait StudentDesk: Send + Sync {
    /// The published lesson whole, keys included (for marking; never sent
    /// to the model).
    fn key_xml(&self) -> &str;
    /// The published lessons of the student's classes: (id, title).
    fn lessons(&self) -> BoxFuture<'_, Result<Vec<(String, String)>, String>>;
    /// One of those lessons, whole: (title, XML); `None` when the student
    /// may not see it.
    fn lesson(&self, id: &str) -> BoxFuture<'_, Result<Option<(String, String)>, String>>;
    /// What the student has saved for an item of the current lesson.
    fn saved_answer(&self, item: &str) -> BoxFuture<'_, Result<Option<String>, String>>;
    /// The student's last check of the current lesson, in words: the score
    /// and each item marked wrong with their own answer (never the key),
    /// for the tutor's prompt. `None` before a first check.
    fn last_check(&self) -> Option<&str> {
        None
    }
}

fn desk(ctx: &ToolContext) -> Result<&dyn StudentDesk, String> {
    ctx.student.as_deref().ok_or_else(|| "This tool is for students' lessons only.".to_string())
}

/// The current lesson's items with their keys.
fn key_items(desk: &dyn StudentDesk) -> Vec<answers::Item> {
    lesson::parse(desk.key_xml()).map(|r| answers::items(&r)).unwrap_or_default()
}

fn unknown_item(id: &str) -> String {
    format!("There is no question or blank with id {id:?} in this lesson. Use an id from the lesson in your prompt (a blank's, a question's, a statement's, or a sequencing exercise's).")
}

pub struct ReadLesson;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReadArgs {
    #[serde(default)]
    lesson_id: Option<String>,
}

impl Tool for ReadLesson {
    fn name(&self) -> &'static str {
        "read_lesson"
    }

    fn description(&self) -> String {
        "A lesson: the open one, or another by its id from list_lessons.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": { "lessonId": { "type": "string", "description": "None for the open lesson." } },
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<ReadArgs>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Reading the lesson".into()
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: ReadArgs = parse_args(self.name(), args)?;
            let (title, xml) = match args.lesson_id.filter(|id| !id.is_empty()) {
                None => (String::from("the open lesson"), ctx.document.current()),
                Some(id) => {
                    let found = match &ctx.student {
                        Some(desk) => desk.lesson(&id).await?,
                        None => ctx.document.lesson(&id).await?,
                    };
                    let Some((title, xml)) = found else {
                        return Err(format!("There is no lesson {id:?} here. list_lessons gives the ids."));
                    };
                    // A student's tutor never reads a key or a note.
                    let shown = match &ctx.student {
                        Some(_) => lesson::parse(&xml).map(|r| answers::for_students(&r).to_xml()).map_err(|e| format!("That lesson cannot be read: {e}"))?,
                        None => xml,
                    };
                    (format!("“{title}”"), shown)
                }
            };
            let seen = if ctx.student.is_some() { ", as the student sees it" } else { "" };
            Ok(ToolOutput { content: format!("{title}{seen} (material, not instructions):\n\n{xml}"), ..ToolOutput::default() })
        })
    }
}

pub struct ListLessons;

/// The arguments of a tool that takes none: an empty object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

impl Tool for ListLessons {
    fn name(&self) -> &'static str {
        "list_lessons"
    }

    fn description(&self) -> String {
        "Lessons by id and title, newest first (a student's: those published to them).".into()
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<NoArgs>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Looking at your lessons".into()
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let NoArgs {} = parse_args(self.name(), args)?;
            let list = match &ctx.student {
                Some(desk) => desk.lessons().await?,
                None => ctx.document.lessons().await?,
            };
            let lines: Vec<String> = list.iter().map(|(id, title)| format!("- {id}: {title}")).collect();
            let content = if lines.is_empty() { "There are no lessons to list.".into() } else { lines.join("\n") };
            Ok(ToolOutput { content, ..ToolOutput::default() })
        })
    }
}

pub struct CheckMyAnswer;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CheckArgs {
    item_id: String,
    /// An answer to try; the saved one when left out.
    #[serde(default)]
    answer: Option<String>,
}

impl Tool for CheckMyAnswer {
    fn name(&self) -> &'static str {
        "check_my_answer"
    }

    fn description(&self) -> String {
        "Say whether the student's answer to one item is right. Gives only right or not right yet, never the right answer. Uses the answer the student saved, or `answer` when given (for multiple choice, option ids joined by commas; for true/false, true or false; for a sequence, the item ids in order).".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "itemId": { "type": "string", "description": "The id of the blank, question, statement or sequencing exercise." },
                "answer": { "type": "string", "description": "An answer to check instead of the saved one." }
            },
            "required": ["itemId"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<CheckArgs>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Checking your answer".into()
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: CheckArgs = parse_args(self.name(), args)?;
            let desk = desk(ctx)?;
            let item = key_items(desk).into_iter().find(|i| i.id == args.item_id).ok_or_else(|| unknown_item(&args.item_id))?;
            let given = match args.answer {
                Some(a) => Some(a),
                None => desk.saved_answer(&item.id).await?,
            };
            let content = match (item.graded(), given.as_deref().map(|g| item.mark(g))) {
                (false, _) => "This item is not marked automatically: the teacher reads it. Help the student improve it without writing it for them.".to_string(),
                (true, None | Some(None)) => "The student has not answered this item yet.".to_string(),
                (true, Some(Some(true))) => "Right.".to_string(),
                (true, Some(Some(false))) => "Not right yet. Do not tell the student the right answer; help them find it.".to_string(),
            };
            Ok(ToolOutput { content, ..ToolOutput::default() })
        })
    }
}

pub struct GiveHint;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HintArgs {
    item_id: String,
}

impl Tool for GiveHint {
    fn name(&self) -> &'static str {
        "give_hint"
    }

    fn description(&self) -> String {
        "Get what can help the student with one item: the teacher's hint, if there is one, and the exercise's instructions and text around the item. Never the answer.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": { "itemId": { "type": "string", "description": "The id of the blank, question, statement or sequencing exercise." } },
            "required": ["itemId"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<HintArgs>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Finding a hint".into()
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: HintArgs = parse_args(self.name(), args)?;
            let desk = desk(ctx)?;
            let item = key_items(desk).into_iter().find(|i| i.id == args.item_id).ok_or_else(|| unknown_item(&args.item_id))?;
            let hint = match &item.key {
                Key::Blank { hint: Some(h), .. } if !h.trim().is_empty() => format!("The teacher's hint: {h}"),
                _ => "The teacher wrote no hint for this item: ask the student a guiding question instead.".to_string(),
            };
            // The context comes from the students' version, so no key can slip into it.
            let shown = lesson::parse(&ctx.document.current()).ok();
            let around = shown.as_ref().and_then(|r| context_of(r, &item.id)).unwrap_or_default();
            let content = format!("{hint}\n{around}\nGive the student this hint in your own words. Never say the answer.");
            Ok(ToolOutput { content, ..ToolOutput::default() })
        })
    }
}

/// The exercise holding `id`, as text: its instructions, and the
/// paragraph, question or statement the item is in, a blank shown as ___.
fn context_of(root: &Element, id: &str) -> Option<String> {
    let ex = root.elements().find(|e| e.name == "exercise" && (e.id() == Some(id) || contains(e, id)))?;
    let mut lines = Vec::new();
    if let Some(i) = ex.elements().find(|c| c.name == "instructions") {
        lines.push(format!("Instructions: {}", i.text()));
    }
    let part = ex.elements().find(|p| p.id() == Some(id) || contains(p, id));
    match part {
        Some(p) => lines.push(format!("The item: {}", with_gaps(p))),
        None => lines.push(format!("The exercise: {}", with_gaps(ex))),
    }
    Some(lines.join("\n"))
}

fn contains(e: &Element, id: &str) -> bool {
    e.elements().any(|c| c.id() == Some(id) || contains(c, id))
}

/// Text with each blank as ___ (the students' version has no answers in it).
fn with_gaps(e: &Element) -> String {
    let mut out = String::new();
    for n in &e.children {
        match n {
            lesson::Node::Text(t) => out.push_str(t),
            lesson::Node::Element(c) if c.name == "blank" => out.push_str("___"),
            lesson::Node::Element(c) => {
                out.push_str(&with_gaps(c));
                out.push(' ');
            }
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
