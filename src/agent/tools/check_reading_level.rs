//! `check_reading_level(target)`: the measured reading level of the lesson
//! as it is now (`lesson::reading`), against a target grade: the whole
//! lesson's, whether it is within ±0.5 of the target, and the blocks
//! furthest from it, so that the model revises those first and measures
//! again. Nothing is guessed: every number is the formula's.

use std::fmt::Write as _;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, Tool, ToolContext, ToolOutput};
use crate::lesson::{self, reading};

pub struct CheckReadingLevel;

/// The most blocks listed.
const LISTED: usize = 5;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    /// A school grade, e.g. 4 or 6.5.
    target: f64,
}

impl Tool for CheckReadingLevel {
    fn name(&self) -> &'static str {
        "check_reading_level"
    }

    fn description(&self) -> String {
        "The reading level of what students read now, against a school grade: the level, whether it is within ±0.5, and the furthest blocks.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "target": { "type": "number", "minimum": 1, "maximum": 16, "description": "A school grade, e.g. 4." }
            },
            "required": ["target"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, args: &Value) -> String {
        match args.get("target").and_then(Value::as_f64) {
            Some(t) => format!("Measuring the reading level (target grade {t})"),
            None => "Measuring the reading level".into(),
        }
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            if !(1.0..=16.0).contains(&args.target) {
                return Err("`target` is a school grade from 1 to 16.".into());
            }
            let root = lesson::parse(&ctx.document.current()).map_err(|e| format!("The lesson cannot be read: {e}"))?;
            let content = report(&root, args.target)?;
            Ok(ToolOutput { content, ..ToolOutput::default() })
        })
    }
}

/// What the model reads.
pub(super) fn report(root: &lesson::Element, target: f64) -> Result<String, String> {
    let Some(whole) = reading::of_lesson(root) else {
        return Err(format!(
            "The lesson has fewer than {} words of running text for students (or its language cannot be measured), so it has no reading level yet.",
            reading::MIN_WORDS
        ));
    };
    let Some(off) = whole.off_by(target) else {
        return Err(format!("This lesson's language is measured with {} ({}), which has no school grades: a grade target cannot be checked.", whole.formula, whole.said()));
    };
    let mut out = format!("Reading level of the lesson: {} ({}, {} words). Target: grade {target}. ", whole.said(), whole.formula, whole.words);
    if off.abs() <= reading::BAND {
        out.push_str("Within ±0.5 of the target.\n");
    } else {
        let _ = writeln!(out, "Not within ±0.5: {:.1} {} the target.", off.abs(), if off > 0.0 { "above" } else { "below" });
    }
    let mut blocks: Vec<(String, String, f64, String)> =
        reading::of_blocks(root).into_iter().filter_map(|(id, what, l)| Some((id, what, l.off_by(target)?, l.said()))).collect();
    blocks.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()));
    if blocks.is_empty() {
        let _ = writeln!(out, "No single block has {} words or more, so only the whole lesson is measured.", reading::MIN_WORDS);
    } else {
        out.push_str("Blocks furthest from the target:\n");
        for (id, what, off, said) in blocks.iter().take(LISTED) {
            let _ = writeln!(out, "- {id} ({what}): {said}, {:.1} {}", off.abs(), if *off > 0.0 { "above" } else { "below" });
        }
    }
    Ok(out)
}
