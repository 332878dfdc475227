//! `find_standards(query)`: the standards of the teacher's school that a
//! lesson may name, found by code ("RL.4") or by words ("theme story").
//! Codes on a lesson are checked against the same frameworks on every
//! write, so the model finds a code here rather than recalling one.

use std::fmt::Write as _;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, Tool, ToolContext, ToolOutput};

pub struct FindStandards;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    query: String,
}

impl Tool for FindStandards {
    fn name(&self) -> &'static str {
        "find_standards"
    }

    fn description(&self) -> String {
        "The school's standards by a code's start (\"RL.4\") or by words. Put codes found here in standards=\"CODE …\" on a lesson or exercise; no others are accepted.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "maxLength": 200, "description": "A code's start, or words." }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, args: &Value) -> String {
        match args.get("query").and_then(Value::as_str) {
            Some(q) => format!("Looking up standards: {}", q.chars().take(60).collect::<String>()),
            None => "Looking up standards".into(),
        }
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            let query = args.query.trim();
            if query.is_empty() || query.chars().count() > 200 {
                return Err("`query` is the start of a code or a few words, at most 200 characters.".into());
            }
            let content = match ctx.document.find_standards(query.to_string()).await? {
                None => "This school has no standards frameworks, so lessons cannot name standards yet. Tell the teacher their school's admin can add one on the School page; do not write codes.".to_string(),
                Some(hits) if hits.is_empty() => format!("No standard of this school's frameworks matches \"{query}\". Try the start of a code, or other words."),
                Some(hits) => {
                    let mut out = format!("{} standard(s) match \"{query}\" (code: what it asks · framework):\n", hits.len());
                    for h in &hits {
                        let _ = writeln!(out, "- {}: {} · {}", h.code, h.statement, h.framework);
                    }
                    out
                }
            };
            Ok(ToolOutput { content, ..ToolOutput::default() })
        })
    }
}
