//! `suggest_next(replies?, actions?)`: what the teacher might do next, shown
//! under the reply as buttons: up to three short follow-ups to send with one
//! click, and up to three of the page's own actions (`chat::actions`), which
//! run without the model. Everything is checked here: an action the page
//! does not have, or an argument it does not take, is an error the model can
//! correct. A successful call ends the reply, so offering costs no extra
//! model call.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, Tool, ToolContext, ToolOutput};
use crate::chat::actions::{PageAction, OFFERED_NAMES, SUGGEST_TOOL};

pub struct SuggestNext;

/// At most this many follow-ups, and as many actions as the page has.
const MOST: usize = 3;
const MOST_ACTIONS: usize = PageAction::WIRE.len();
/// The longest follow-up, in characters: it is a button.
const LONGEST_REPLY: usize = 80;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    replies: Vec<String>,
    #[serde(default)]
    actions: Vec<ActionArgs>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ActionArgs {
    name: String,
    answer_key: Option<bool>,
}

impl Tool for SuggestNext {
    fn name(&self) -> &'static str {
        SUGGEST_TOOL
    }

    fn description(&self) -> String {
        "Buttons under your final reply, once: up to three follow-ups in the teacher's words, and page actions (undo_edit only after a saved edit).".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "replies": {
                    "type": "array",
                    "maxItems": MOST,
                    "items": { "type": "string", "maxLength": LONGEST_REPLY },
                    "description": "E.g. \"Make it harder\"."
                },
                "actions": {
                    "type": "array",
                    "maxItems": MOST_ACTIONS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "enum": OFFERED_NAMES },
                            "answerKey": { "type": "boolean", "description": "print: the answer key." }
                        },
                        "required": ["name"],
                        "additionalProperties": false
                    }
                }
            },
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Suggesting what to do next".into()
    }

    fn ends_turn(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            let (replies, actions) = check(args)?;
            let content = format!(
                "Shown under your reply: {} follow-up(s) and {} button(s). Your reply is complete; do not add to it.",
                replies.len(),
                actions.len()
            );
            Ok(ToolOutput { content, replies, actions, ..ToolOutput::default() })
        })
    }
}

/// The follow-ups, trimmed, and the actions, each once; or what is wrong.
fn check(args: Args) -> Result<(Vec<String>, Vec<PageAction>), String> {
    if args.replies.is_empty() && args.actions.is_empty() {
        return Err("Give at least one reply or action, or do not call suggest_next.".into());
    }
    if args.replies.len() > MOST || args.actions.len() > MOST_ACTIONS {
        return Err(format!("Offer at most {MOST} replies and {MOST_ACTIONS} actions."));
    }
    let mut replies = Vec::with_capacity(args.replies.len());
    for r in &args.replies {
        let r = r.split_whitespace().collect::<Vec<_>>().join(" ");
        if r.is_empty() {
            return Err("A suggested reply is empty.".into());
        }
        if r.chars().count() > LONGEST_REPLY {
            return Err(format!("The suggested reply \"{r}\" is longer than {LONGEST_REPLY} characters; make it a short phrase."));
        }
        if !replies.contains(&r) {
            replies.push(r);
        }
    }
    let mut actions = Vec::with_capacity(args.actions.len());
    for a in &args.actions {
        let action = PageAction::offered(&a.name, a.answer_key)?;
        if !actions.contains(&action) {
            actions.push(action);
        }
    }
    Ok((replies, actions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: Value) -> Result<(Vec<String>, Vec<PageAction>), String> {
        check(parse_args("suggest_next", args)?)
    }

    #[test]
    fn replies_and_actions_are_checked() {
        let (replies, actions) = run(json!({
            "replies": ["  Make it   harder ", "Add a key", "Make it harder"],
            "actions": [{"name": "print", "answerKey": true}, {"name": "student_preview"}, {"name": "print", "answerKey": true}]
        }))
        .unwrap();
        assert_eq!(replies, ["Make it harder", "Add a key"]);
        assert_eq!(actions, [PageAction::PrintKey, PageAction::StudentPreview]);
    }

    #[test]
    fn unknown_actions_and_bad_arguments_are_refused() {
        let e = run(json!({"actions": [{"name": "delete_lesson"}]})).unwrap_err();
        assert!(e.contains("no action named `delete_lesson`"), "{e}");
        let e = run(json!({"actions": [{"name": "undo_edit", "answerKey": true}]})).unwrap_err();
        assert!(e.contains("takes no arguments"), "{e}");
        let e = run(json!({"actions": [{"name": "print", "answerKey": "yes"}]})).unwrap_err();
        assert!(e.contains("Wrong arguments for suggest_next"), "{e}");
        let e = run(json!({"actions": [{"name": "print", "copies": 30}]})).unwrap_err();
        assert!(e.contains("copies"), "{e}");
        let e = run(json!({"replies": ["a", "b", "c", "d"]})).unwrap_err();
        assert!(e.contains("at most 3 replies"), "{e}");
        let five = vec![json!({"name": "print"}); 5];
        let e = run(json!({ "actions": five })).unwrap_err();
        assert!(e.contains("4 actions"), "{e}");
        let e = run(json!({"replies": ["x".repeat(81)]})).unwrap_err();
        assert!(e.contains("longer than 80"), "{e}");
        let e = run(json!({"replies": ["   "]})).unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = run(json!({})).unwrap_err();
        assert!(e.contains("at least one"), "{e}");
    }
}
