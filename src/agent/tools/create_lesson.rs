//! `create_lesson(title, documentXml)`: makes a new lesson for the teacher,
//! such as "a quiz version of this as its own lesson". The document is
//! validated as an edit is (its errors go back to the model); the lesson
//! open now is not touched. The new lesson is the teacher's like any other,
//! its first version written by the assistant, and the step shows it as a
//! card with "Open".

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, refused_document, Tool, ToolContext, ToolOutput};
use crate::lesson;

pub struct CreateLesson;

/// The longest title a made lesson may have, in characters (as the lesson
/// list takes them).
const TITLE_CHARS: usize = crate::refusals::MAX_LESSON_TITLE_CHARS;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    title: String,
    document_xml: String,
}

impl Tool for CreateLesson {
    fn name(&self) -> &'static str {
        "create_lesson"
    }

    fn description(&self) -> String {
        "A new lesson (the open one stays as it is), only when the teacher asks for one.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "description": "Its title." },
                "documentXml": { "type": "string", "description": "The whole lesson, <lesson> to </lesson>." }
            },
            "required": ["title", "documentXml"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Making a new lesson".into()
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            if ctx.document.suggests_only() {
                return Err(super::NOT_ASKED.into());
            }
            let title = args.title.split_whitespace().collect::<Vec<_>>().join(" ");
            if title.is_empty() || title.chars().count() > TITLE_CHARS {
                return Err(format!("The title must have between 1 and {TITLE_CHARS} characters. Call create_lesson again with a short title."));
            }
            if args.document_xml.len() > lesson::MAX_BYTES {
                return Err(format!("The lesson is larger than {} KB, so it was not made. Make it shorter.", lesson::MAX_BYTES / 1024));
            }
            let root = lesson::normalize(&args.document_xml).map_err(|errors| refused_document("The lesson was not made", self.name(), &errors))?;
            let made = ctx.document.create_lesson(title, root.to_xml()).await?;
            Ok(ToolOutput {
                content: format!(
                    "Made the lesson “{}” (id {}). The teacher can open it from your reply; the lesson open now is unchanged. Tell the teacher in a sentence what is in it.",
                    made.title, made.id
                ),
                summary: Some(format!("Made “{}”", made.title)),
                lesson: Some(made),
                ..ToolOutput::default()
            })
        })
    }
}
