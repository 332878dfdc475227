//! `edit_document(documentXml, summary)`: replaces the lesson with a new
//! version. The document is validated first; an invalid one is not stored and
//! the validator's errors go back to the model so it can correct itself.
//!
//! A valid edit lands at once, unless the teacher reviews edits for this
//! lesson or the edit is destructive (it removes an exercise, empties one to
//! the least the format allows, or removes more than a third of the lesson's
//! words): then it becomes a proposal the teacher applies or discards, and
//! the model is told so. The guard holds whatever the setting, so a lesson
//! wiped by an injected instruction or a mistake never lands without a
//! click. It measures each edit against the version just before it and
//! against the lesson as the turn found it, so a wipe in several small cuts
//! is held once the cuts add up.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, refused_document, SaveRejection, Tool, ToolContext, ToolOutput};
use crate::{chat::proposal::DecisionKind, lesson};

pub struct EditDocument;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Args {
    document_xml: String,
    #[serde(default)]
    summary: String,
    /// What in the class's results the change answers ("7 of 12 wrote
    /// 'ran' for blank 3"), shown on the proposal's card.
    #[serde(default)]
    evidence: Option<String>,
}

/// The longest evidence a card shows.
pub const EVIDENCE_CHARS: usize = 300;

impl Tool for EditDocument {
    fn name(&self) -> &'static str {
        "edit_document"
    }

    fn description(&self) -> String {
        "Replace the lesson with a new version, only when the teacher asked for a change.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "documentXml": { "type": "string", "description": "The whole new lesson, <lesson> to </lesson>, every element kept with its id." },
                "summary": { "type": "string", "description": "One line on what changed, for the history." },
                "evidence": { "type": "string", "description": "Only after read_results: the counts it answers, e.g. \"7 of 12 wrote 'ran' for blank 3\"." }
            },
            "required": ["documentXml", "summary"],
            "additionalProperties": false
        })
    }

    fn check_args(&self, args: Value) -> Result<(), String> {
        parse_args::<Args>(self.name(), args).map(drop)
    }

    fn display_text(&self, _args: &Value) -> String {
        "Editing document".into()
    }

    fn early_label(&self) -> Option<String> {
        Some(self.display_text(&Value::Null))
    }

    /// A whole lesson takes a real model many seconds to write out: say how
    /// much has come and, while it can be guessed, how far along that is:
    /// against the lesson as it is (a rewrite is about as long, and JSON
    /// escaping adds about a tenth). Past that guess (the lesson is growing)
    /// only the size is said; it is never said to be finished before it is.
    fn progress(&self, argument_bytes: usize, ctx: &ToolContext) -> Option<(String, Option<f32>)> {
        let expected = ctx.document.current().len() as f32 * 1.1 + 100.0;
        let fraction = argument_bytes as f32 / expected;
        Some((format!("Writing the lesson: {} KB so far", argument_bytes / 1024), (fraction < 0.95).then_some(fraction)))
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>> {
        Box::pin(async move {
            let args: Args = parse_args(self.name(), args)?;
            if ctx.document.suggests_only() {
                return Err(super::NOT_ASKED.into());
            }
            let evidence = args.evidence.as_deref().map(str::trim).filter(|e| !e.is_empty());
            if let Some(evidence) = evidence {
                if !ctx.document.has_read_results() {
                    return Err("`evidence` is for a change that answers the class's results: call read_results first, or leave `evidence` out.".into());
                }
                if evidence.chars().count() > EVIDENCE_CHARS {
                    return Err(format!("`evidence` is one or two short lines (at most {EVIDENCE_CHARS} characters): give the counts, not the answers in full."));
                }
            }
            // The lesson as it is: new ids avoid its ids, and the edit is
            // described (and judged) against it.
            let before = lesson::parse(&ctx.document.current()).ok();
            // Nor any id of its linked lessons: a block added here must not
            // pass for one of theirs when changes are carried by id.
            let linked = ctx.document.linked_ids().await?;
            let root = lesson::normalize_after(&args.document_xml, before.as_ref(), &linked)
                .map_err(|errors| refused_document("The document was not saved", self.name(), &errors))?;
            let xml = root.to_xml();
            let summary = match args.summary.trim() {
                "" => "Edited the lesson".to_string(),
                s => s.to_string(),
            };
            let changes = before.as_ref().map(|b| lesson::changes(b, &root)).unwrap_or_default();
            let destructive = before.as_ref().and_then(|b| destructive(b, &root)).map(|r| format!(" {r}")).or_else(|| {
                let found = lesson::parse(&ctx.document.found()).ok()?;
                let reason = destructive(&found, &root)?;
                Some(format!(", with your earlier edits in this reply, {reason}"))
            });
            if destructive.is_some() || ctx.document.reviews_edits() {
                let proposed = ctx.document.propose(xml, summary.clone(), changes.clone()).await.map_err(|e| {
                    format!("The document was valid but could not be kept for review: {}", rejection_for_the_model(e))
                })?;
                let why = match destructive {
                    Some(reason) => format!("This edit{reason}, so it was not applied"),
                    None => "The teacher reviews every edit to this lesson, so it was not applied yet".to_string(),
                };
                return Ok(ToolOutput {
                    content: format!(
                        "{why}: it waits for the teacher to apply or discard it (proposal {}). The lesson is unchanged until then. \
                         The proposed changes:\n{}\nTell the teacher in a sentence or two what you propose. Do not send the same edit again.",
                        proposed.id,
                        change_lines(&changes)
                    ),
                    summary: Some(summary),
                    changes,
                    proposal: Some(proposed),
                    decisions: vec![DecisionKind::Apply, DecisionKind::Discard],
                    ..ToolOutput::default()
                });
            }
            let revision = ctx.document.save(xml.clone(), summary.clone()).await.map_err(|e| {
                format!("The document was valid but could not be saved: {}", rejection_for_the_model(e))
            })?;
            // What was saved: the edit, merged into anything saved since the reply began.
            let xml = ctx.document.current();
            Ok(ToolOutput {
                content: format!("Saved as version {revision}. Missing ids were filled in; the lesson now reads:\n```xml\n{xml}```"),
                summary: Some(summary),
                document_xml: Some(xml),
                revision: Some(revision),
                changes,
                ..ToolOutput::default()
            })
        })
    }
}

/// Why an edit must be reviewed whatever the lesson's setting, worded to
/// follow "This edit …": it removes an exercise (or keeps one by its id but
/// empties it), or more than a third of the lesson's words.
fn destructive(before: &lesson::Element, after: &lesson::Element) -> Option<String> {
    fn exercises(e: &lesson::Element) -> Vec<(String, &lesson::Element)> {
        e.elements().filter(|b| b.name == "exercise").filter_map(|b| Some((b.id()?.to_string(), b))).collect()
    }
    let kept = exercises(after);
    let removed = exercises(before)
        .into_iter()
        .filter(|(id, was)| kept.iter().find(|(k, _)| k == id).is_none_or(|(_, now)| emptied(was, now)))
        .count();
    if removed > 0 {
        return Some(format!("removes {} exercise{}", removed, if removed == 1 { "" } else { "s" }));
    }
    let words = |e: &lesson::Element| e.text().split_whitespace().count();
    let (was, now) = (words(before), words(after));
    (was > 0 && (was - now.min(was)) * 3 > was).then(|| format!("removes {} of the lesson's {was} words", was - now))
}

/// An exercise kept by its id but emptied: it had more than the least its
/// kind allows (questions, statements, items or blanks) and now has only
/// that, or it lost more than three quarters of its words.
fn emptied(was: &lesson::Element, now: &lesson::Element) -> bool {
    fn parts(ex: &lesson::Element) -> usize {
        fn blanks(e: &lesson::Element) -> usize {
            e.elements().map(|c| if c.name == "blank" { 1 } else { blanks(c) }).sum()
        }
        match ex.attr("type") {
            Some("fill-blanks") => blanks(ex),
            _ => ex.elements().filter(|e| e.name != "instructions").count(),
        }
    }
    let least = if was.attr("type") == Some("sequencing") { 2 } else { 1 };
    let words = |e: &lesson::Element| e.text().split_whitespace().count();
    (parts(was) > least && parts(now) <= least) || (words(was) >= 8 && words(now) * 4 < words(was))
}

/// The change list as the model reads it.
fn change_lines(changes: &[lesson::Change]) -> String {
    if changes.is_empty() {
        return "- (no visible change)".into();
    }
    changes.iter().map(|c| format!("- {}", c.text)).collect::<Vec<_>>().join("\n")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson(body: &str) -> lesson::Element {
        // A reading long enough that one statement is not a third of the words.
        let reading = "A verb says what someone does, what happens or what something is. ".repeat(3);
        lesson::parse(&format!("<lesson><h1 id=\"h\">Verbs</h1><p id=\"p\">{reading}</p>{body}</lesson>")).unwrap()
    }

    const QUIZ: &str = r#"<exercise id="ex-1" type="true-false"><statement id="s1" answer="true">Verbs name actions.</statement><statement id="s2" answer="false">Verbs are nouns.</statement><statement id="s3" answer="true">Run is a verb.</statement></exercise>"#;

    #[test]
    fn an_exercise_kept_by_id_but_emptied_counts_as_removed() {
        let was = lesson(QUIZ);
        let one = lesson(r#"<exercise id="ex-1" type="true-false"><statement id="s1" answer="true">Verbs name actions.</statement></exercise>"#);
        assert_eq!(destructive(&was, &one).as_deref(), Some("removes 1 exercise"));
        // Dropping one statement of three is an ordinary edit.
        let two = lesson(&QUIZ.replace(r#"<statement id="s3" answer="true">Run is a verb.</statement>"#, ""));
        assert_eq!(destructive(&was, &two), None);
        // Kept whole and reworded: nothing removed.
        assert_eq!(destructive(&was, &lesson(&QUIZ.replace("Run is", "Jump is"))), None);
    }

    #[test]
    fn a_sequence_may_not_shrink_to_its_last_two_items() {
        let seq = |items: &str| lesson(&format!(r#"<exercise id="ex-2" type="sequencing">{items}</exercise>"#));
        let three = seq(r#"<item id="i1" position="1">Wake up</item><item id="i2" position="2">Eat</item><item id="i3" position="3">Sleep</item>"#);
        let two = seq(r#"<item id="i1" position="1">Wake up</item><item id="i2" position="2">Sleep</item>"#);
        assert_eq!(destructive(&three, &two).as_deref(), Some("removes 1 exercise"));
    }

    #[test]
    fn blanks_are_what_a_fill_in_exercise_holds() {
        let was = lesson(r#"<exercise id="ex-3" type="fill-blanks"><p id="p1">Je <blank id="b1" answer="suis"/> ici et tu <blank id="b2" answer="es"/> là.</p></exercise>"#);
        let now = lesson(r#"<exercise id="ex-3" type="fill-blanks"><p id="p1">Je <blank id="b1" answer="suis"/> ici et tu es là.</p></exercise>"#);
        assert!(destructive(&was, &now).is_some());
    }
}
