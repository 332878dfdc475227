//! A tool call's arguments as the model sent them, kept as JSON text.
//!
//! The server only passes them on (to the stream, to the stored message) and
//! the browser only shows one or two fields of them in a step. Neither needs
//! a JSON tree, and keeping `serde_json::Value` out of the shared types keeps
//! its parser, printer and map out of the browser bundle.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolArgs(Box<RawValue>);

/// The fields of a tool's arguments that a step shows, when they are there
/// and are text (`load_skill`'s skill, `edit_document`'s summary and the
/// evidence from the class's results it answers).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ArgsBrief {
    pub skill: Option<String>,
    pub summary: Option<String>,
    pub evidence: Option<String>,
}

impl ToolArgs {
    /// `{}`: a call announced before its arguments have arrived.
    pub fn empty() -> Self {
        Self(RawValue::from_string("{}".into()).expect("{} is JSON"))
    }

    /// The arguments as the model sent them: their JSON when they are JSON,
    /// otherwise the text itself as a JSON string (so nothing is dropped).
    pub fn from_model(raw: &str) -> Self {
        match RawValue::from_string(raw.to_string()) {
            Ok(v) => Self(v),
            Err(_) => Self(serde_json::value::to_raw_value(raw).expect("a string is JSON")),
        }
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The fields a step shows; empty when the arguments are not an object
    /// or those fields are not text.
    pub fn brief(&self) -> ArgsBrief {
        serde_json::from_str(self.0.get()).unwrap_or_default()
    }
}

impl PartialEq for ToolArgs {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_text_is_kept_as_json_or_as_a_string() {
        assert_eq!(ToolArgs::from_model(r#"{"skill":"fill-blanks"}"#).json(), r#"{"skill":"fill-blanks"}"#);
        assert_eq!(ToolArgs::from_model(r#"{"documentXml":"<lesson>"#).json(), r#""{\"documentXml\":\"<lesson>""#);
        assert_eq!(ToolArgs::from_model("").json(), r#""""#);
        assert_eq!(ToolArgs::empty().json(), "{}");
    }

    #[test]
    fn brief_picks_text_fields_and_ignores_the_rest() {
        let args = ToolArgs::from_model(r#"{"documentXml":"<lesson/>","summary":"Added a verb exercise","n":[1,{"a":2}]}"#);
        assert_eq!(args.brief(), ArgsBrief { skill: None, summary: Some("Added a verb exercise".into()), evidence: None });
        let args = ToolArgs::from_model(r#"{"documentXml":"<lesson/>","summary":"Hint","evidence":"7 of 12 wrote 'ran'"}"#);
        assert_eq!(args.brief().evidence.as_deref(), Some("7 of 12 wrote 'ran'"));
        assert_eq!(ToolArgs::from_model(r#"{"skill":"fill-blanks"}"#).brief().skill.as_deref(), Some("fill-blanks"));
        assert_eq!(ToolArgs::from_model(r#"{"skill":3}"#).brief(), ArgsBrief::default());
        assert_eq!(ToolArgs::from_model("not json").brief(), ArgsBrief::default());
    }

    #[test]
    fn round_trips_inside_a_payload() {
        #[derive(Serialize, Deserialize)]
        struct P {
            args: ToolArgs,
        }
        let p: P = serde_json::from_str(r#"{"args": {"skill": "x"}}"#).unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"args":{"skill": "x"}}"#);
    }
}
