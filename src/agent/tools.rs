//! The tools the agent can call, behind one small trait, and a registry that
//! dispatches by name. A tool that fails returns its error as text: it goes
//! back to the model, which can correct itself. Unknown tools and arguments
//! that are not JSON, or not of the tool's shape, are errors of the same kind.

mod check_reading_level;
mod create_lesson;
mod edit_document;
mod find_standards;
mod load_skill;
mod read_results;
mod read_open_answers;
mod draft_feedback;
mod read_source;
mod suggest_next;
mod tutor;

use std::sync::Arc;

use async_openai::types::chat::{ChatCompletionTool, ChatCompletionTools, FunctionObject};
use futures::future::BoxFuture;
use serde_json::Value;

pub use create_lesson::CreateLesson;
pub use edit_document::EditDocument;
pub use find_standards::FindStandards;
pub use load_skill::LoadSkill;
pub use read_results::ReadResults;
pub use check_reading_level::CheckReadingLevel;
pub use read_open_answers::ReadOpenAnswers;
pub use draft_feedback::{DraftFeedback, FEEDBACK_CHARS};
pub use read_source::ReadSource;
pub use suggest_next::SuggestNext;
pub use tutor::{CheckMyAnswer, GiveHint, ListLessons, ReadLesson, StudentDesk};

use super::skills::Skills;

/// Where the lesson being edited lives. The turn engine stores it in the
/// database; tests keep it in memory.
pub trait DocumentStore: Send + Sync {
    /// The document as it is now.
    fn current(&self) -> String;
    /// The document as the turn found it, before any of its edits: the
    /// edit guard measures what a turn removes against it, so a lesson cut
    /// away in several small edits is held as one large cut would be.
    fn found(&self) -> String {
        self.current()
    }
    /// Stores a new, already validated document; returns its revision number.
    fn save(&self, xml: String, summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>>;
    /// Whether the teacher reviews every edit before it lands (the lesson's
    /// "Review edits before applying").
    fn reviews_edits(&self) -> bool;
    /// Whether the turn was started by the app, not asked for by the
    /// teacher (students' wrong answers): it may suggest, never change a
    /// lesson.
    fn suggests_only(&self) -> bool {
        false
    }
    /// Whether this turn has read the class's results (`read_results`):
    /// only then may an edit say what in them it answers.
    fn has_read_results(&self) -> bool {
        false
    }
    /// Keeps a new, already validated document as a proposal for the teacher
    /// to apply or discard, on top of the revision the turn works on; nothing
    /// is saved to the lesson. Returns the proposal's id and digest.
    fn propose(&self, xml: String, summary: String, changes: Vec<crate::lesson::Change>) -> BoxFuture<'_, Result<Proposed, SaveRejection>>;
    /// Reads the lesson again after the teacher applied an edit of this
    /// turn's, so the turn goes on from the version they made.
    fn reload(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
    /// The ids the lessons linked to this one use (its core, its
    /// versions): an edit gives new blocks none of them (`lesson::normalize_after`).
    fn linked_ids(&self) -> BoxFuture<'_, Result<std::collections::HashSet<String>, String>> {
        Box::pin(async { Ok(std::collections::HashSet::new()) })
    }
    /// The lesson's sources (the teacher's material), as the turn began.
    fn sources(&self) -> Vec<crate::models::SourceSummary> {
        Vec::new()
    }
    /// At most `most` characters of a source's text from character `from`:
    /// its name, its whole length and that page; `None` when the lesson has
    /// no such source, an error when it cannot be read now.
    fn read_source(&self, _id: &str, _from: usize, _most: usize) -> BoxFuture<'_, Result<Option<SourcePage>, String>> {
        Box::pin(async { Ok(None) })
    }
    /// The teacher's lessons, newest first: (id, title), for `list_lessons`.
    fn lessons(&self) -> BoxFuture<'_, Result<Vec<(String, String)>, String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Makes a new lesson for the teacher from `xml` (already valid): its id
    /// and its title as kept. An error is said to the model as it is.
    fn create_lesson(&self, _title: String, _xml: String) -> BoxFuture<'_, Result<crate::chat::events::MadeLesson, String>> {
        Box::pin(async { Err("New lessons cannot be made here.".to_string()) })
    }
    /// One of the teacher's lessons whole: (title, XML); `None` when it is
    /// not theirs.
    fn lesson(&self, _id: &str) -> BoxFuture<'_, Result<Option<(String, String)>, String>> {
        Box::pin(async { Ok(None) })
    }
    /// What the lesson's students answered (`read_results`); `None` when
    /// the lesson is published to no class. Once read, every edit of the
    /// turn is held for the teacher (`reviews_edits`): changes made from
    /// students' answers are always reviewed.
    fn results(&self) -> BoxFuture<'_, Result<Option<ClassResults>, String>> {
        Box::pin(async { Ok(None) })
    }
    /// Standards of the teacher's school whose code starts with `query` or
    /// whose statement holds its words (`find_standards`); `None` when the
    /// school has no framework at all.
    fn find_standards(&self, _query: String) -> BoxFuture<'_, Result<Option<Vec<crate::models::StandardHit>>, String>> {
        Box::pin(async { Ok(None) })
    }
    /// The students' answers to one open item (`read_open_answers`);
    /// `None` when the lesson has no such open item.
    fn open_answers(&self, _item_id: String) -> BoxFuture<'_, Result<Option<OpenAnswers>, String>> {
        Box::pin(async { Err("Students' answers cannot be read here.".to_string()) })
    }
    /// Keeps drafted feedback for the teacher to review (`draft_feedback`);
    /// how many were kept. Refused (with why, for the model) when a draft
    /// does not fit the item or its rubric.
    fn draft_feedback(&self, _item_id: String, _drafts: Vec<FeedbackDraft>) -> BoxFuture<'_, Result<usize, String>> {
        Box::pin(async { Err("Feedback cannot be drafted here.".to_string()) })
    }
}

/// An open item and what each student answered, numbered as on the
/// teacher's Results page (never by name or email).
#[derive(Clone, Debug, PartialEq)]
pub struct OpenAnswers {
    pub item: crate::lesson::open::OpenItem,
    /// Per student in Results order: their answer, if they gave one.
    pub answers: Vec<Option<String>>,
}

/// One drafted feedback: for the student numbered `student` (from 1, as
/// `read_open_answers` lists them), and the points by the item's rubric.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackDraft {
    pub student: usize,
    pub feedback: String,
    #[serde(default)]
    pub points: Option<u32>,
}

/// A lesson's results as the assistant reads them: per item, how many
/// answered and how many were right, and the commonest wrong answers;
/// per student, how far they got (named by their place in the teacher's
/// Results list, never by name or email: the model's provider gets no
/// student's identity).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassResults {
    /// Students with the lesson (current and former).
    pub students: usize,
    pub items: Vec<ItemResults>,
    /// (answered, right of marked, checked) per student, in Results order.
    pub per_student: Vec<(usize, Option<usize>, bool)>,
}

/// One item's results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ItemResults {
    pub id: String,
    /// Marked automatically (else the teacher reads it).
    pub graded: bool,
    pub answered: usize,
    pub right: usize,
    /// Wrong answers as written (trimmed; a blank's in lower case), with
    /// how many gave each, commonest first.
    pub wrong: Vec<(String, usize)>,
}

/// A page of a source: its name, its text's whole length in characters,
/// and the page's text.
pub type SourcePage = (String, usize, String);

/// Why a store did not take a document. The store only says what happened;
/// `edit_document` words it for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveRejection {
    /// Someone else saved a newer version first; the store now holds it
    /// (`current()` reads it) as `revision`.
    Conflict { revision: i64, current: String },
    /// The store's own checks found these problems.
    Invalid(Vec<crate::lesson::LessonError>),
    /// Nothing could be stored just now (the database, or the turn itself
    /// could not be saved).
    Unavailable,
}

/// Why a turn the teacher did not ask for may not change their lessons.
pub const NOT_ASKED: &str = "Nothing was changed: this reply was started by the app, not by the teacher, so it may only suggest. Say in a sentence or two what you would change and why; the teacher will ask if they want it.";

/// An edit kept for the teacher's review (`DocumentStore::propose`): its
/// id, and the digest of what it would change that a decision on it names
/// (made by the store, which holds what the digest is made with).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proposed {
    pub id: String,
    pub digest: String,
}

/// What a successful tool call produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// The result as the model reads it.
    pub content: String,
    /// One line for people (e.g. an edit's summary).
    pub summary: Option<String>,
    /// The lesson after an edit, and its revision.
    pub document_xml: Option<String>,
    pub revision: Option<i64>,
    /// What an edit changed (or would change), in the teacher's words.
    pub changes: Vec<crate::lesson::Change>,
    /// An edit held for the teacher's review: nothing was saved.
    pub proposal: Option<Proposed>,
    /// How the teacher may decide that held edit: the tool's own word.
    pub decisions: Vec<crate::chat::proposal::DecisionKind>,
    /// Follow-ups and page actions offered under the reply (`suggest_next`).
    pub replies: Vec<String>,
    pub actions: Vec<crate::chat::actions::PageAction>,
    /// The lesson a `create_lesson` call made.
    pub lesson: Option<crate::chat::events::MadeLesson>,
}

pub struct ToolContext {
    pub document: Arc<dyn DocumentStore>,
    /// A student's turn: what the tutor's tools read (the lesson's key stays
    /// behind it). `None` for a teacher's.
    pub student: Option<Arc<dyn StudentDesk>>,
    /// Where the turn waits for the teacher's decision on an edit held for
    /// review (the turn pauses, then goes on with it). `None`: a held edit
    /// is left for later, and the model is told it waits.
    pub approvals: Option<Arc<dyn Approvals>>,
}

/// What the teacher decided about an edit held for review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Applied, as this revision of the lesson (which `DocumentStore::reload` reads).
    Applied { revision: Option<i64> },
    /// Discarded, with their reason if they gave one.
    Discarded { reason: Option<String> },
    /// A newer proposal took its place.
    Replaced,
    /// No decision came in the time a turn waits: the edit stays for later.
    NotYet,
}

/// Waits for the teacher's decision on a proposal.
pub trait Approvals: Send + Sync {
    /// Waits until the teacher applies or discards `proposal_id` (or the
    /// wait runs out: `Decision::NotYet`).
    fn decision<'a>(&'a self, proposal_id: &'a str) -> BoxFuture<'a, Decision>;

    /// The turn pauses now: `state` is what resuming it needs, kept so that
    /// the pause outlives the process (`Agent::resume_turn`).
    fn pause(&self, state: &crate::agent::pause::PausedTurn) {
        let _ = state;
    }

    /// Whether the process is stopping: a paused turn stopped then is put
    /// aside for another process to resume, not ended.
    fn stopping(&self) -> bool {
        false
    }
}

pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> String;
    /// JSON schema of the arguments.
    fn parameters(&self) -> Value;
    /// Reads `args` into the tool's argument type, as `execute` does first,
    /// and nothing more. The schema above is written by hand; a test holds
    /// every tool's schema against its type through this.
    fn check_args(&self, args: Value) -> Result<(), String>;
    /// What the sidebar shows while the tool runs.
    fn display_text(&self, args: &Value) -> String;
    /// A label that needs no arguments, for tools worth announcing while their
    /// arguments are still streaming (an edit sends the whole lesson, which
    /// takes a real model many seconds).
    fn early_label(&self) -> Option<String> {
        None
    }
    /// For a tool announced early: what to show under its spinner once
    /// `argument_bytes` of its arguments have come, and how far along that
    /// is (0 to 1) when it can be told.
    fn progress(&self, _argument_bytes: usize, _ctx: &ToolContext) -> Option<(String, Option<f32>)> {
        None
    }
    /// A call of this tool, when it succeeds and the reply has text, is the
    /// reply's last word: the model is not called again for it.
    fn ends_turn(&self) -> bool {
        false
    }
    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, String>>;
}

pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl ToolRegistry {
    /// The agent's tools: `load_skill`, `edit_document`, `read_source`,
    /// `suggest_next`, the two that read for both roles, `read_lesson`
    /// and `list_lessons`, `create_lesson`, `check_reading_level` and
    /// `find_standards`.
    pub fn standard(skills: Arc<Skills>) -> Self {
        Self {
            tools: vec![
                Box::new(LoadSkill::new(skills)),
                Box::new(EditDocument),
                Box::new(ReadSource),
                Box::new(ReadResults),
                Box::new(SuggestNext),
                Box::new(ReadLesson),
                Box::new(ListLessons),
                Box::new(CreateLesson),
                Box::new(CheckReadingLevel),
                Box::new(FindStandards),
            ],
        }
    }

    /// The teacher's tools and those of drafting feedback on students'
    /// open answers: declared only in a "Draft feedback" turn, so no other
    /// request carries their definitions.
    pub fn feedback(skills: Arc<Skills>) -> Self {
        let mut registry = Self::standard(skills);
        registry.tools.push(Box::new(ReadOpenAnswers));
        registry.tools.push(Box::new(DraftFeedback));
        registry
    }

    /// The tutor's tools, for a student's turn: reading and checking only.
    /// Nothing here can change a lesson; a call of any other tool (say, a
    /// forged `edit_document`) is an unknown tool, refused.
    pub fn tutor() -> Self {
        Self { tools: vec![Box::new(ReadLesson), Box::new(ListLessons), Box::new(CheckMyAnswer), Box::new(GiveHint)] }
    }

    fn find(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The tools as the provider needs them described.
    pub fn definitions(&self) -> Vec<ChatCompletionTools> {
        self.tools
            .iter()
            .map(|t| {
                ChatCompletionTools::Function(ChatCompletionTool {
                    function: FunctionObject {
                        name: t.name().to_string(),
                        description: Some(t.description()),
                        parameters: Some(t.parameters()),
                        strict: None,
                    },
                })
            })
            .collect()
    }

    /// The label for a call, also for tools that do not exist.
    pub fn display_text(&self, name: &str, args: &Value) -> String {
        match self.find(name) {
            Some(t) => t.display_text(args),
            None => format!("Trying an unknown tool ({name})"),
        }
    }

    /// The label to show as soon as a call of `name` begins, if it has one.
    pub fn early_label(&self, name: &str) -> Option<String> {
        self.find(name).and_then(|t| t.early_label())
    }

    /// What a call of `name` announced early has come to (see `Tool::progress`).
    pub fn progress(&self, name: &str, argument_bytes: usize, ctx: &ToolContext) -> Option<(String, Option<f32>)> {
        self.find(name).and_then(|t| t.progress(argument_bytes, ctx))
    }

    /// Whether a successful call of `name` ends the reply.
    pub fn ends_turn(&self, name: &str) -> bool {
        self.find(name).is_some_and(|t| t.ends_turn())
    }

    /// Runs one call from its raw argument text.
    pub async fn call(&self, name: &str, raw_args: &str, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let Some(tool) = self.find(name) else {
            return Err(format!("There is no tool named `{name}`. The tools are: {}.", self.names().join(", ")));
        };
        let args: Value = serde_json::from_str(raw_args).map_err(|e| {
            format!("The arguments for {name} are not valid JSON ({e}); they may have been cut off. Call {name} again with a complete JSON object.")
        })?;
        if !args.is_object() {
            return Err(format!("The arguments for {name} must be a JSON object."));
        }
        tool.execute(args, ctx).await
    }
}

/// A document the checker refused, in words the model can act on: what did
/// not happen (`what`, e.g. "The document was not saved"), every problem,
/// and how to call `tool` again.
pub(crate) fn refused_document(what: &str, tool: &str, errors: &[crate::lesson::LessonError]) -> String {
    let one = errors.len() == 1;
    format!(
        "{what}: it has {} problem{}.\n{}\nFix {} and call {tool} again with the whole corrected document.",
        errors.len(),
        if one { "" } else { "s" },
        crate::lesson::describe_errors(errors),
        if one { "it" } else { "them" },
    )
}

/// Reads a tool's arguments into its typed form, with an error the model can act on.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(tool: &str, args: Value) -> Result<T, String> {
    serde_json::from_value(args).map_err(|e| format!("Wrong arguments for {tool}: {e}. Check the tool's parameters and call it again."))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::agent::skills::parse_skill;

    pub(crate) struct Memory(pub Mutex<(String, i64)>);

    impl DocumentStore for Memory {
        fn current(&self) -> String {
            self.0.lock().unwrap().0.clone()
        }
        fn save(&self, xml: String, _summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
            Box::pin(async move {
                let mut g = self.0.lock().unwrap();
                g.0 = xml;
                g.1 += 1;
                Ok(g.1)
            })
        }
        fn reviews_edits(&self) -> bool {
            false
        }
        fn propose(&self, _xml: String, _summary: String, _changes: Vec<crate::lesson::Change>) -> BoxFuture<'_, Result<Proposed, SaveRejection>> {
            Box::pin(async { Ok(Proposed { id: "proposal-1".into(), digest: "d".into() }) })
        }
    }

    fn registry() -> (ToolRegistry, ToolContext) {
        let skills = Skills::from_list(vec![parse_skill("fill-blanks", "---\nlabel: Fill\ndescription: d\n---\nBlank rules.")]);
        let memory = Arc::new(Memory(Mutex::new(("<lesson/>".into(), 1))));
        (ToolRegistry::standard(Arc::new(skills)), ToolContext { document: memory, student: None, approvals: None })
    }

    #[tokio::test]
    async fn unknown_tools_are_errors_for_the_model() {
        let (r, ctx) = registry();
        let e = r.call("delete_lesson", "{}", &ctx).await.unwrap_err();
        assert!(e.contains("no tool named `delete_lesson`") && e.contains("load_skill, edit_document, read_source, read_results, suggest_next, read_lesson, list_lessons, create_lesson, check_reading_level, find_standards"), "{e}");
        assert_eq!(r.display_text("delete_lesson", &Value::Null), "Trying an unknown tool (delete_lesson)");
    }

    #[tokio::test]
    async fn arguments_that_are_not_json_or_not_an_object_are_errors() {
        let (r, ctx) = registry();
        let e = r.call("load_skill", r#"{"skill":"fill-bl"#, &ctx).await.unwrap_err();
        assert!(e.contains("not valid JSON") && e.contains("cut off"), "{e}");
        let e = r.call("load_skill", "[1]", &ctx).await.unwrap_err();
        assert!(e.contains("must be a JSON object"), "{e}");
    }

    #[tokio::test]
    async fn arguments_of_the_wrong_shape_are_errors() {
        let (r, ctx) = registry();
        let e = r.call("load_skill", r#"{"name":"fill-blanks"}"#, &ctx).await.unwrap_err();
        assert!(e.contains("Wrong arguments for load_skill") && e.contains("skill"), "{e}");
        let e = r.call("load_skill", r#"{"skill":"cooking"}"#, &ctx).await.unwrap_err();
        assert!(e.contains("no skill named \"cooking\"") && e.contains("fill-blanks"), "{e}");
        let e = r.call("edit_document", r#"{"summary":"x"}"#, &ctx).await.unwrap_err();
        assert!(e.contains("documentXml"), "{e}");
    }

    #[tokio::test]
    async fn load_skill_returns_the_instructions() {
        let (r, ctx) = registry();
        let out = r.call("load_skill", r#"{"skill":"fill-blanks"}"#, &ctx).await.unwrap();
        assert_eq!(out.content, "Blank rules.");
        assert_eq!(r.display_text("load_skill", &serde_json::json!({"skill": "fill-blanks"})), "Checking fill-blanks rules");
    }

    #[tokio::test]
    async fn edit_document_validates_then_stores() {
        let (r, ctx) = registry();
        let bad = r.call("edit_document", r#"{"documentXml":"<lesson><p>x</lesson>","summary":"x"}"#, &ctx).await.unwrap_err();
        assert!(bad.contains("not saved") && bad.contains("line 1"), "{bad}");
        assert_eq!(ctx.document.current(), "<lesson/>");
        let ok = r
            .call("edit_document", r#"{"documentXml":"<lesson><p>Hi</p></lesson>","summary":"Said hi"}"#, &ctx)
            .await
            .unwrap();
        assert_eq!(ok.revision, Some(2));
        assert_eq!(ok.summary.as_deref(), Some("Said hi"));
        assert!(ok.document_xml.as_deref().unwrap().contains(r#"<p id="p-1">Hi</p>"#));
        assert!(ok.content.contains("version 2") && ok.content.contains(r#"<p id="p-1">Hi</p>"#), "{}", ok.content);
        assert_eq!(ctx.document.current(), ok.document_xml.unwrap());
        assert_eq!(r.display_text("edit_document", &Value::Null), "Editing document");
    }

    /// A lesson in a turn that has read the class's results, or one the
    /// teacher did not ask for.
    struct Turn {
        memory: Memory,
        read_results: bool,
        suggests_only: bool,
    }

    impl DocumentStore for Turn {
        fn current(&self) -> String {
            self.memory.current()
        }
        fn save(&self, xml: String, summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
            self.memory.save(xml, summary)
        }
        fn reviews_edits(&self) -> bool {
            false
        }
        fn suggests_only(&self) -> bool {
            self.suggests_only
        }
        fn has_read_results(&self) -> bool {
            self.read_results
        }
        fn propose(&self, xml: String, summary: String, changes: Vec<crate::lesson::Change>) -> BoxFuture<'_, Result<Proposed, SaveRejection>> {
            self.memory.propose(xml, summary, changes)
        }
    }

    fn turn(read_results: bool, suggests_only: bool) -> ToolContext {
        let memory = Memory(Mutex::new(("<lesson/>".into(), 1)));
        ToolContext { document: Arc::new(Turn { memory, read_results, suggests_only }), student: None, approvals: None }
    }

    #[tokio::test]
    async fn evidence_is_taken_only_after_the_results_were_read_and_only_short() {
        let (r, _) = registry();
        let edit = |evidence: &str| serde_json::json!({"documentXml": "<lesson><p>Hint</p></lesson>", "summary": "Hint", "evidence": evidence}).to_string();
        let e = r.call("edit_document", &edit("7 of 12 wrote 'ran'"), &turn(false, false)).await.unwrap_err();
        assert!(e.contains("call read_results first"), "{e}");
        let ctx = turn(true, false);
        let e = r.call("edit_document", &edit(&"x".repeat(edit_document::EVIDENCE_CHARS + 1)), &ctx).await.unwrap_err();
        assert!(e.contains("at most 300 characters"), "{e}");
        assert_eq!(ctx.document.current(), "<lesson/>");
        let ok = r.call("edit_document", &edit("7 of 12 wrote 'ran'"), &ctx).await.unwrap();
        assert_eq!(ok.revision, Some(2));
    }

    #[tokio::test]
    async fn a_turn_nobody_asked_for_changes_no_lesson() {
        let (r, _) = registry();
        let ctx = turn(false, true);
        let e = r.call("edit_document", r#"{"documentXml":"<lesson><p>Hi</p></lesson>","summary":"Said hi"}"#, &ctx).await.unwrap_err();
        assert_eq!(e, NOT_ASKED);
        let e = r.call("create_lesson", r#"{"title":"Volcanoes","documentXml":"<lesson/>"}"#, &ctx).await.unwrap_err();
        assert_eq!(e, NOT_ASKED);
        assert_eq!(ctx.document.current(), "<lesson/>");
    }

    /// An example of what `schema` describes: every property (`all`) or only
    /// the required ones.
    fn example(schema: &Value, all: bool) -> Value {
        let kind = match &schema["type"] {
            Value::Array(kinds) => kinds.iter().find(|k| *k != "null").cloned().unwrap_or(Value::Null),
            k => k.clone(),
        };
        match kind.as_str().unwrap_or("") {
            "object" => {
                let required: Vec<&str> = schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
                let props = schema["properties"].as_object().cloned().unwrap_or_default();
                Value::Object(props.iter().filter(|(k, _)| all || required.contains(&k.as_str())).map(|(k, v)| (k.clone(), example(v, all))).collect())
            }
            "array" => Value::Array(vec![example(&schema["items"], all)]),
            "integer" | "number" => schema.get("minimum").cloned().unwrap_or(serde_json::json!(1)),
            "boolean" => Value::Bool(true),
            _ => schema["enum"].get(0).cloned().unwrap_or_else(|| Value::String("x".into())),
        }
    }

    /// Fields the schema asks the model for that the type lets it leave
    /// out, on purpose: an edit without a summary is still the teacher's edit.
    const LENIENT: &[(&str, &str)] = &[("edit_document", "summary")];

    #[test]
    fn every_tool_schema_matches_its_argument_type() {
        let (standard, _) = registry();
        let tutor = ToolRegistry::tutor();
        for tool in standard.tools.iter().chain(tutor.tools.iter()) {
            let (name, schema) = (tool.name(), tool.parameters());
            assert_eq!(schema["type"], "object", "{name}");
            // What the schema describes, whole or only what it requires, reads.
            tool.check_args(example(&schema, true)).unwrap_or_else(|e| panic!("{name}, every property: {e}"));
            tool.check_args(example(&schema, false)).unwrap_or_else(|e| panic!("{name}, required properties: {e}"));
            // What it does not describe is refused, as it says.
            assert_eq!(schema["additionalProperties"], false, "{name}");
            let mut extra = example(&schema, true);
            extra["notInTheSchema"] = Value::Bool(true);
            assert!(tool.check_args(extra).is_err(), "{name} accepts a property its schema does not have");
            // What it requires, the type requires.
            for field in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                if LENIENT.contains(&(name, field)) {
                    continue;
                }
                let mut without = example(&schema, true);
                without.as_object_mut().unwrap().remove(field);
                assert!(tool.check_args(without).is_err(), "{name} accepts a call without {field}, which its schema requires");
            }
        }
    }

    #[test]
    fn the_skill_parameter_is_an_enum_of_the_skills() {
        let (r, _) = registry();
        let defs = serde_json::to_value(r.definitions()).unwrap();
        assert_eq!(defs[0]["type"], "function");
        assert_eq!(defs[0]["function"]["name"], "load_skill");
        assert_eq!(defs[0]["function"]["parameters"]["properties"]["skill"]["enum"], serde_json::json!(["fill-blanks"]));
        assert_eq!(defs[1]["function"]["parameters"]["required"], serde_json::json!(["documentXml", "summary"]));
    }
}
