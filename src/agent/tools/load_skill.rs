//! `load_skill(skill)`: the instructions for one kind of exercise, read before
//! writing one. The skill names are those found at start-up.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, Tool, ToolContext, ToolOutput};
use crate::agent::skills::Skills;

pub struct LoadSkill {
    skills: Arc<Skills>,
}

impl LoadSkill {
    pub fn new(skills: Arc<Skills>) -> Self {
        Self { skills }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    skill: String,
}

impl Tool for LoadSkill {
    fn name(&self) -> &'static str {
        "load_skill"
    }

    fn description(&self) -> String {
        // The skills are named once, in the schema's `enum`; their names
        // say what they are for. Every word here is sent with every call.
        "The rules for one kind of exercise or task, by name. Load the matching one before you write or change an exercise.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": { "type": "string", "enum": self.skills.names(), "description": "The skill to load." }
            },
            "required": ["skill"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, args: &Value) -> String {
        match args.get("skill").and_then(Value::as_str) {
            Some(skill) => format!("Checking {skill} rules"),
            None => "Checking the rules".into(),
        }
    }

    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            let skill = self.skills.get(&args.skill).ok_or_else(|| {
                format!("There is no skill named \"{}\". The skills are: {}.", args.skill, self.skills.names().join(", "))
            })?;
            // The step says which skill and what it covers.
            let summary = format!("{}: {}", skill.label, skill.description);
            Ok(ToolOutput { content: skill.body.clone(), summary: Some(summary), ..ToolOutput::default() })
        })
    }
}
