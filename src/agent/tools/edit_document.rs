//! `edit_document(documentXml, summary)`: replaces the lesson with a new
//! version. The document is validated first; an invalid one is not stored and
//! the validator's errors go back to the model so it can correct itself.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, SaveRejection, Tool, ToolContext, ToolOutput};
use crate::lesson;

pub struct EditDocument;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Args {
    document_xml: String,
    #[serde(default)]
    summary: String,
}

impl Tool for EditDocument {
    fn name(&self) -> &'static str {
        "edit_document"
    }

    fn description(&self) -> String {
        "Replace the lesson with a new version. Send the whole document, from <lesson> to </lesson>, keeping the id of every element you do not delete. Only call this when the teacher asked for a change.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "documentXml": { "type": "string", "description": "The complete new lesson XML." },
                "summary": { "type": "string", "description": "One short line saying what changed, for the lesson's history." }
            },
            "required": ["documentXml", "summary"],
            "additionalProperties": false
        })
    }

    fn display_text(&self, _args: &Value) -> String {
        "Editing document".into()
    }

    fn early_label(&self) -> Option<String> {
        Some(self.display_text(&Value::Null))
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            let root = lesson::normalize(&args.document_xml).map_err(|errors| {
                format!(
                    "The document was not saved: it has {} problem{}.\n{}\nFix {} and call edit_document again with the whole corrected document.",
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" },
                    lesson::describe_errors(&errors),
                    if errors.len() == 1 { "it" } else { "them" },
                )
            })?;
            let xml = root.to_xml();
            let summary = match args.summary.trim() {
                "" => "Edited the lesson".to_string(),
                s => s.to_string(),
            };
            let revision = ctx.document.save(xml.clone(), summary.clone()).await.map_err(|e| {
                format!("The document was valid but could not be saved: {}", rejection_for_the_model(e))
            })?;
            Ok(ToolOutput {
                content: format!("Saved as version {revision}. Missing ids were filled in; the lesson now reads:\n```xml\n{xml}```"),
                summary: Some(summary),
                document_xml: Some(xml),
                revision: Some(revision),
            })
        })
    }
}

/// Why a valid edit was not stored, in words the model can act on.
fn rejection_for_the_model(rejection: SaveRejection) -> String {
    match rejection {
        SaveRejection::Conflict { revision, current } => format!(
            "The teacher saved a new version of the lesson (version {revision}) while you were working, so your edit was not applied. The lesson now reads:\n```xml\n{current}```\nMake your change on this version."
        ),
        SaveRejection::Invalid(errors) => lesson::describe_errors(&errors),
        SaveRejection::Unavailable => "the lesson could not be stored just now, so it was left as it was; try again.".into(),
    }
}
