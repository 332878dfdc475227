//! `draft_feedback(itemId, drafts)`: feedback on students' open answers,
//! drafted for the teacher. Nothing reaches a student: each draft waits on
//! the Results page until the teacher approves it (as it is or edited) or
//! discards it. Points only by the item's rubric. Declared only in a
//! "Draft feedback" turn.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, FeedbackDraft, Tool, ToolContext, ToolOutput};

pub struct DraftFeedback;

/// The longest feedback, in characters: a few sentences a student reads.
pub const FEEDBACK_CHARS: usize = 800;
/// The most drafts one call takes.
const MAX_DRAFTS: usize = 60;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    item_id: String,
    drafts: Vec<FeedbackDraft>,
}

impl Tool for DraftFeedback {
    fn name(&self) -> &'static str {
        "draft_feedback"
    }

    fn description(&self) -> String {
        "Draft feedback on students' answers to one open item, after read_open_answers. One draft per student who answered, by their number: a few sentences addressed to the student, and `points` by the item's rubric (leave points out when it has none). Drafts wait for the teacher to approve, edit or discard; students see only what the teacher approves.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "itemId": { "type": "string", "description": "The open item the answers are to." },
                "drafts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "student": { "type": "integer", "minimum": 1, "description": "The student's number, as read_open_answers lists them." },
                            "feedback": { "type": "string", "description": "Two to four sentences to the student: what works, and one next step." },
                            "points": { "type": "integer", "minimum": 0, "description": "The score by the rubric (the sum over its criteria); only when the item has a rubric." }
                        },
                        "required": ["student", "feedback"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["itemId", "drafts"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Drafting feedback for your review".into()
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            if args.drafts.is_empty() {
                return Err("`drafts` is empty: give one draft per student who answered.".into());
            }
            if args.drafts.len() > MAX_DRAFTS {
                return Err(format!("At most {MAX_DRAFTS} drafts in one call: split them over several calls."));
            }
            for d in &args.drafts {
                let chars = d.feedback.trim().chars().count();
                if chars == 0 {
                    return Err(format!("The feedback for student {} is empty.", d.student));
                }
                if chars > FEEDBACK_CHARS {
                    return Err(format!("The feedback for student {} is {chars} characters; keep each under {FEEDBACK_CHARS} (a few sentences).", d.student));
                }
            }
            let n = ctx.document.draft_feedback(args.item_id.clone(), args.drafts).await?;
            Ok(ToolOutput {
                summary: Some(format!("{n} drafts")),
                content: format!("Kept {n} drafts of feedback on {} for the teacher to review on the Results page. No student sees them until the teacher approves.", args.item_id),
                ..ToolOutput::default()
            })
        })
    }
}
