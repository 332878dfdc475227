//! The sidebar's state: the messages on screen and, for each reply, its
//! rendered markdown, its steps and where it stands. `Reply::apply` folds one
//! stream event into it; a reply from the history is shown by feeding it the
//! events its stored record stands for (`TurnRecord::events`), so a live reply
//! and a reloaded one go through the same code.
//!
//! A little over 400 lines; split with the controller in #44.

use leptos::prelude::*;

use crate::{
    chat::{
        actions::SUGGEST_TOOL,
        events::{ChatEvent, MadeLesson, ToolStatus},
        markdown::MarkdownStream,
        message::ChatMessage,
        proposal::{ProposalMark, ProposalStatus},
    },
    components::lesson_state::LessonState,
    lesson::Change,
};

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Sent; nothing has come back yet.
    Thinking,
    Streaming,
    Done,
    /// Stopped by the teacher.
    Stopped,
    Failed(String),
}

impl Phase {
    pub fn is_over(&self) -> bool {
        matches!(self, Self::Done | Self::Stopped | Self::Failed(_))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StepStatus {
    Running,
    Success,
    Failed(String),
    /// An edit waiting for the teacher's review.
    Proposed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub id: String,
    pub label: String,
    pub status: StepStatus,
    /// The arguments in a line (the skill's name, the edit's summary).
    pub detail: String,
    /// What an edit changed or would change.
    pub changes: Vec<Change>,
    /// What in the class's results an edit answers, as the assistant said
    /// (the server refuses it from a reply that did not read them).
    pub evidence: String,
    /// The revision an edit was saved as (what Undo takes back).
    pub revision: Option<i64>,
    /// An edit held for review, and what the teacher decided.
    pub proposal: Option<ProposalMark>,
    /// The version that undid its edit, once the teacher took it back.
    pub undone: Option<i64>,
    /// What came of the teacher's last action on this step (applied,
    /// undone, refused), and whether it went well.
    pub outcome: Option<(bool, String)>,
    /// The changes a refused action collided with.
    pub conflicts: Vec<Change>,
    /// An action on it is under way.
    pub busy: bool,
    /// The call's arguments and what the model was told, as sent (its
    /// "Details").
    pub input: String,
    pub output: String,
    /// What a call under way says it is doing, and how far along it is.
    pub progress: Option<(String, Option<f32>)>,
}

impl Default for Step {
    /// A step that is gone (see `review::step_view`).
    fn default() -> Self {
        Self::started(String::new(), String::new(), String::new(), String::new())
    }
}

impl Step {
    fn started(id: String, label: String, detail: String, input: String) -> Self {
        Self {
            id,
            label,
            status: StepStatus::Running,
            detail,
            input,
            output: String::new(),
            progress: None,
            changes: Vec::new(),
            evidence: String::new(),
            revision: None,
            proposal: None,
            undone: None,
            outcome: None,
            conflicts: Vec::new(),
            busy: false,
        }
    }
}

/// Where a part of a reply begins: its text from finished block `from`
/// (and the growing tail, while it is the last part), or a group of steps
/// from step `from`, with whether its fold is open.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PartMark {
    Text { from: usize },
    Steps { from: usize, expanded: RwSignal<bool> },
}

impl PartMark {
    fn is_text(&self) -> bool {
        matches!(self, Self::Text { .. })
    }
}

/// One reply of the assistant.
#[derive(Clone, Copy)]
pub struct Reply {
    /// The markdown of finished blocks, each rendered once, as it is added
    /// (`messages::ReplyText`); they never change.
    pub blocks: RwSignal<Vec<String>>,
    /// The markdown of the block still growing, rendered again as it grows.
    pub tail: RwSignal<String>,
    pub steps: RwSignal<Vec<Step>>,
    /// The reply's parts in the order they came: text, a group of steps,
    /// text… (`TurnRecord::parts`, as events build it).
    pub parts: RwSignal<Vec<PartMark>>,
    pub phase: RwSignal<Phase>,
    /// What a reasoning model thought, as plain text.
    pub reasoning: RwSignal<String>,
    /// The "Thinking" section is open: while the model thinks, until its
    /// reply starts (then the teacher opens it when they want).
    pub thinking_open: RwSignal<bool>,
    markdown: StoredValue<MarkdownStream>,
    /// What the teacher asked, for Retry.
    pub asked: StoredValue<String>,
    /// What the reply offers to do next (`suggest_next`): follow-ups to
    /// send and the page's actions.
    pub suggested: RwSignal<(Vec<String>, Vec<String>)>,
    /// Lessons the reply made (`create_lesson`), shown as cards with "Open".
    pub made: RwSignal<Vec<MadeLesson>>,
}

impl Reply {
    pub fn new(asked: &str) -> Self {
        Self {
            blocks: RwSignal::new(Vec::new()),
            tail: RwSignal::new(String::new()),
            steps: RwSignal::new(Vec::new()),
            parts: RwSignal::new(Vec::new()),
            phase: RwSignal::new(Phase::Thinking),
            reasoning: RwSignal::new(String::new()),
            thinking_open: RwSignal::new(false),
            markdown: StoredValue::new(MarkdownStream::new()),
            asked: StoredValue::new(asked.to_string()),
            suggested: RwSignal::new((Vec::new(), Vec::new())),
            made: RwSignal::new(Vec::new()),
        }
    }

    /// A reply from the history: its stored record's events, folded in as a
    /// live reply's are (documents are left alone: the page has the lesson).
    pub fn stored(m: &ChatMessage, asked: &str) -> Self {
        let r = Self::new(asked);
        for event in m.record().events(&m.id) {
            r.apply(event, None);
        }
        // What the teacher decided about a proposal, and the revision an
        // edit made (for Undo), are not events: they come from the record.
        r.steps.update(|steps| {
            for c in m.tool_calls.iter().filter(|c| c.proposal.is_some() || c.revision.is_some()) {
                if let Some(step) = steps.iter_mut().find(|s| s.id == c.id) {
                    step.proposal.clone_from(&c.proposal);
                    step.revision = c.revision;
                    step.undone = c.undone;
                }
            }
        });
        r
    }

    /// Text is coming: a part of text begins unless one is under way.
    fn text_part(&self) {
        if !self.parts.with_untracked(|p| p.last().is_some_and(PartMark::is_text)) {
            let from = self.blocks.with_untracked(Vec::len);
            self.parts.update(|p| p.push(PartMark::Text { from }));
        }
    }

    /// A step begins: the text before it is finished, and a group of steps
    /// begins unless one is under way.
    fn steps_part(&self) {
        if self.parts.with_untracked(|p| p.last().is_some_and(|m| !m.is_text())) {
            return;
        }
        if let Some(block) = self.markdown.try_update_value(MarkdownStream::flush).flatten() {
            self.blocks.update(|b| b.push(block));
        }
        if !self.tail.with_untracked(String::is_empty) {
            self.tail.set(String::new());
        }
        let from = self.steps.with_untracked(Vec::len);
        self.parts.update(|p| p.push(PartMark::Steps { from, expanded: RwSignal::new(false) }));
    }

    /// Opens the fold of the group that holds step `id`.
    pub fn open_step(&self, id: &str) {
        let Some(at) = self.steps.with_untracked(|s| s.iter().position(|s| s.id == id)) else { return };
        let group = self.parts.with_untracked(|p| {
            p.iter().rev().find_map(|m| match m {
                PartMark::Steps { from, expanded } if *from <= at => Some(*expanded),
                _ => None,
            })
        });
        if let Some(expanded) = group {
            expanded.set(true);
        }
    }

    /// Changes one step in place (after the teacher acted on it).
    pub fn update_step(&self, id: &str, f: impl FnOnce(&mut Step)) {
        self.steps.update(|steps| {
            if let Some(step) = steps.iter_mut().find(|s| s.id == id) {
                f(step);
            }
        });
    }

    /// Folds one event in. Returns a sentence for screen readers, when there is one.
    pub fn apply(&self, event: ChatEvent, lesson: Option<LessonState>) -> Option<String> {
        match event {
            ChatEvent::Reasoning(t) => {
                self.streaming();
                let first = self.reasoning.with_untracked(String::is_empty);
                self.reasoning.update(|r| r.push_str(&t.content));
                if first && self.blocks.with_untracked(Vec::is_empty) && self.tail.with_untracked(String::is_empty) {
                    self.thinking_open.set(true);
                }
                None
            }
            ChatEvent::Text(t) => {
                self.streaming();
                self.text_part();
                if self.thinking_open.get_untracked() && self.blocks.with_untracked(Vec::is_empty) && self.tail.with_untracked(String::is_empty) {
                    self.thinking_open.set(false);
                }
                let update = self.markdown.try_update_value(|m| m.push(&t.content))?;
                if let Some(block) = update.finished {
                    self.blocks.update(|b| b.push(block));
                }
                self.tail.set(update.tail);
                None
            }
            ChatEvent::ToolStart(s) | ChatEvent::ToolInput(s) => {
                self.streaming();
                // What to do next is offered as buttons under the reply, not as a step.
                if s.tool == SUGGEST_TOOL {
                    return None;
                }
                // The arguments are parsed for each use: parsing them once and
                // passing the result on cost the sidebar island 2.5 KB of code
                // (`make bench-islands`), for a parse of a few bytes per step.
                let detail = detail_of(&s.tool, &s.args);
                let evidence = if s.tool == "edit_document" { s.args.brief().evidence.map(|e| e.trim().to_string()).unwrap_or_default() } else { String::new() };
                let input = s.args.json().to_string();
                if self.steps.with_untracked(|steps| steps.iter().any(|x| x.id == s.id)) {
                    // Announced when its name came, now with its arguments
                    // (and so, for some tools, a more precise label).
                    let (id, label) = (s.id.clone(), s.display_text);
                    self.update_step(&id, |step| {
                        step.input = input;
                        step.label = label;
                        step.evidence = evidence;
                        if !detail.is_empty() {
                            step.detail = detail;
                        }
                    });
                    return None;
                }
                let said = format!("{}…", s.display_text);
                self.steps_part();
                self.steps.update(|steps| {
                    let mut step = Step::started(s.id, s.display_text, detail, input);
                    step.evidence = evidence;
                    steps.push(step);
                });
                Some(said)
            }
            ChatEvent::ToolProgress(p) => {
                let p = *p;
                self.update_step(&p.id, |s| s.progress = Some((p.message, p.fraction)));
                None
            }
            ChatEvent::ToolEnd(end) => {
                if end.status == ToolStatus::Success && !(end.replies.is_empty() && end.actions.is_empty()) {
                    self.suggested.set((end.replies, end.actions));
                    return None;
                }
                if let Some(made) = end.lesson.clone() {
                    self.made.update(|m| m.push(made));
                }
                let mut said = None;
                self.steps.update(|steps| {
                    if let Some(step) = steps.iter_mut().rev().find(|s| s.id == end.id) {
                        step.progress = None;
                        step.output = end.output.clone().unwrap_or_default();
                        step.status = match end.status {
                            ToolStatus::Success => StepStatus::Success,
                            ToolStatus::Error => StepStatus::Failed(end.error.clone().unwrap_or_default()),
                            ToolStatus::Proposed => StepStatus::Proposed,
                        };
                        if let Some(summary) = &end.summary {
                            step.detail = summary.clone();
                        }
                        step.changes.clone_from(&end.changes);
                        step.revision = end.revision;
                        // A paused turn's edit ends once the teacher has
                        // decided: what they decided stays shown.
                        let decided = step.proposal.as_ref().is_some_and(|p| Some(&p.id) == end.proposal_id.as_ref() && p.status != ProposalStatus::Pending);
                        if !decided {
                            step.proposal = end.proposal_id.clone().map(|id| ProposalMark::held(id, end.digest.clone(), Vec::new()));
                        }
                        said = Some(format!(
                            "{}: {}",
                            step.label,
                            match end.status {
                                ToolStatus::Success => "done",
                                ToolStatus::Error => "failed",
                                ToolStatus::Proposed => "waiting for your review",
                            }
                        ));
                    }
                });
                // The server sends a document with the revision it is (a
                // replayed edit whose document is no longer the lesson's
                // comes without either).
                if let (Some(xml), Some(revision), Some(lesson)) = (end.document_xml, end.revision, lesson) {
                    lesson.apply_edit(revision, xml, end.document_html.unwrap_or_default(), &end.changes);
                }
                said
            }
            ChatEvent::Done(_) => {
                self.finish_tail();
                self.phase.set(Phase::Done);
                Some("The reply is finished.".into())
            }
            ChatEvent::Cancelled(_) => {
                self.finish_tail();
                self.phase.set(Phase::Stopped);
                Some("Stopped.".into())
            }
            ChatEvent::Error(e) => {
                self.finish_tail();
                self.phase.set(Phase::Failed(e.message.clone()));
                Some(format!("The reply failed: {}", e.message))
            }
            ChatEvent::AwaitingApproval(a) => {
                let mut said = None;
                self.update_step(&a.id, |step| {
                    step.progress = None;
                    step.status = StepStatus::Proposed;
                    step.changes.clone_from(&a.changes);
                    if step.proposal.as_ref().is_none_or(|p| p.id != a.proposal_id) {
                        step.proposal = Some(ProposalMark::held(&a.proposal_id, a.digest.clone(), Vec::new()));
                    }
                    said = Some(format!("{}: waiting for your review. The reply goes on once you apply or discard it.", step.label));
                });
                said
            }
            // A slow reader's warning: the merged text that follows is all it needs.
            ChatEvent::RoundFinished(_) | ChatEvent::Usage(_) | ChatEvent::Warning(_) | ChatEvent::AssistantTextDone(_) => None,
        }
    }

    /// The reply is under way. Said once: everything that shows the phase
    /// would otherwise run again on every chunk of text.
    fn streaming(&self) {
        self.phase.maybe_update(|p| std::mem::replace(p, Phase::Streaming) != Phase::Streaming);
    }

    /// Steps still running when the turn ended did not finish.
    fn finish_tail(&self) {
        self.steps.update(|steps| {
            for s in steps.iter_mut().filter(|s| s.status == StepStatus::Running) {
                s.status = StepStatus::Failed("did not finish".into());
            }
        });
    }
}

fn detail_of(tool: &str, args: &crate::chat::events::ToolArgs) -> String {
    match tool {
        "load_skill" => args.brief().skill.map(|s| format!("Skill: {s}")).unwrap_or_default(),
        "edit_document" => args.brief().summary.unwrap_or_default(),
        _ => String::new(),
    }
}

/// A message on screen: a teacher's (its text, with the lesson text it asks
/// about; or, for a turn the assistant started on its own, the note of what
/// started it) or a reply.
#[derive(Clone)]
pub struct UiMessage {
    pub key: u64,
    pub text: String,
    pub quote: Option<String>,
    pub trigger: Option<String>,
    pub reply: Option<Reply>,
}

#[cfg(test)]
mod tests {
    use std::sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    };

    use leptos::reactive::effect::ImmediateEffect;

    use super::*;
    use crate::chat::events::ToolArgs;

    /// A reply as the chat's messages store it, from its record.
    fn stored_reply(record: &crate::chat::turn::TurnRecord) -> ChatMessage {
        ChatMessage {
            id: "m1".into(),
            role: crate::chat::message::Role::Assistant,
            content: record.text.clone(),
            reasoning: record.reasoning.clone(),
            tool_calls: record.tool_calls.clone(),
            document_xml: None,
            status: record.status,
            error: None,
            model: None,
            usage: record.usage,
            turn_id: None,
            created_at: String::new(),
            attachments: None,
            rounds: record.rounds,
        }
    }

    /// What a reply shows: its markdown, its steps, where it stands, and its
    /// thinking (and whether that is open).
    fn rendering(r: Reply) -> (String, Vec<Step>, Phase, String, bool, Vec<(bool, usize)>) {
        (
            // Each block rendered on its own, as the conversation's view does.
            r.blocks.get_untracked().iter().map(|b| crate::chat::markdown::render(b)).collect::<String>() + &crate::chat::markdown::render(&r.tail.get_untracked()),
            r.steps.get_untracked(),
            r.phase.get_untracked(),
            r.reasoning.get_untracked(),
            r.thinking_open.get_untracked(),
            r.parts.get_untracked().iter().map(|m| match m {
                PartMark::Text { from } => (true, *from),
                PartMark::Steps { from, .. } => (false, *from),
            }).collect(),
        )
    }

    #[test]
    fn text_and_steps_show_in_the_order_they_came_live_and_reloaded() {
        use crate::chat::{
            events::{DoneData, ToolEndData, ToolStartData},
            turn::TurnRecord,
        };
        let owner = Owner::new();
        owner.set();
        let start = ChatEvent::ToolStart(Box::new(ToolStartData {
            id: "a".into(),
            tool: "load_skill".into(),
            args: ToolArgs::from_model(r#"{"skill":"true-false"}"#),
            display_text: "Checking true-false rules".into(),
            round_index: 1,
        }));
        let events = vec![
            ChatEvent::text_in(1, "First the rules."),
            start,
            ChatEvent::ToolEnd(Box::new(ToolEndData::bare("a".into(), ToolStatus::Success))),
            ChatEvent::text_in(2, "\n\nNow the **exercise**."),
            ChatEvent::Done(DoneData::of("m1")),
        ];
        let live = Reply::new("Go");
        let mut record = TurnRecord::default();
        for e in events {
            record.apply(&e);
            live.apply(e, None);
        }
        let stored = stored_reply(&record);
        let shown = rendering(live);
        assert_eq!(shown.5, vec![(true, 0), (false, 0), (true, 1)], "text, a group of steps, text");
        assert_eq!(live.blocks.get_untracked().len(), 1, "the text before the step is a finished block");
        assert!(shown.0.starts_with("<p>First the rules.</p>") && shown.0.contains("<strong>exercise</strong>"), "{}", shown.0);
        assert_eq!(rendering(Reply::stored(&stored, "Go")), shown);
    }

    #[test]
    fn a_reloaded_reply_shows_what_the_live_one_showed() {
        use crate::chat::{
            events::{DoneData, ToolEndData, ToolStartData},
            message::MessageStatus,
            turn::TurnRecord,
        };
        let owner = Owner::new();
        owner.set();
        let start = |id: &str, tool: &str, args: &str, label: &str| {
            ChatEvent::ToolStart(Box::new(ToolStartData {
                id: id.into(),
                tool: tool.into(),
                args: ToolArgs::from_model(args),
                display_text: label.into(),
                round_index: 1,
            }))
        };
        let end = |id: &str, status, summary: Option<&str>| {
            ChatEvent::ToolEnd(Box::new(ToolEndData {
                error: (status == ToolStatus::Error).then(|| "line 1: bad".to_string()),
                summary: summary.map(str::to_string),
                ..ToolEndData::bare(id.into(), status)
            }))
        };
        let events = vec![
            ChatEvent::Reasoning(crate::chat::events::TextData { content: "The teacher wants ".into(), round_index: 1 }),
            ChatEvent::Reasoning(crate::chat::events::TextData { content: "verbs <b>now</b>.".into(), round_index: 1 }),
            // Announced when its name came, then with its arguments.
            start("a", "load_skill", "{}", "Checking the rules"),
            start("a", "load_skill", r#"{"skill":"fill-blanks"}"#, "Checking fill-blanks rules"),
            end("a", ToolStatus::Success, None),
            start("b", "edit_document", "{}", "Editing document"),
            end("b", ToolStatus::Error, None),
            start("c", "edit_document", "{}", "Editing document"),
            end("c", ToolStatus::Success, Some("Added verbs")),
            ChatEvent::text("I added **three"),
            ChatEvent::text("** verbs.\n\n- one\n"),
            ChatEvent::text("- two\n\n```text\nx < y\n```\n\nDone"),
            ChatEvent::Done(DoneData::of("m1")),
        ];
        let live = Reply::new("Add verbs");
        let mut record = TurnRecord::default();
        for e in events {
            record.apply(&e);
            live.apply(e, None);
        }
        let stored = stored_reply(&record);
        assert_eq!(stored.status, MessageStatus::Complete);
        let reloaded = Reply::stored(&stored, "Add verbs");
        let (html, steps, phase, thought, open, parts) = rendering(live);
        assert_eq!(rendering(reloaded), (html.clone(), steps.clone(), phase.clone(), thought.clone(), open, parts));
        assert_eq!(thought, "The teacher wants verbs <b>now</b>.");
        assert!(!open, "the thinking folds away once the reply has started");
        assert!(html.contains("<strong>three</strong>") && html.contains("x &lt; y"), "{html}");
        assert_eq!(steps.len(), 3);
        assert_eq!((steps[0].label.as_str(), steps[0].detail.as_str()), ("Checking fill-blanks rules", "Skill: fill-blanks"));
        assert_eq!(steps[2].detail, "Added verbs");
        assert_eq!(phase, Phase::Done);
    }

    #[test]
    fn streaming_text_changes_the_phase_once_not_per_chunk() {
        let owner = Owner::new();
        owner.set();
        let reply = Reply::new("hello");
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let _watch = ImmediateEffect::new_isomorphic(move || {
            reply.phase.track();
            counted.fetch_add(1, Ordering::SeqCst);
        });
        for piece in ["Hel", "lo ", "the", "re."] {
            reply.apply(ChatEvent::text(piece), None);
        }
        // The first run, then Thinking → Streaming; the other chunks change nothing.
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert_eq!(reply.phase.get_untracked(), Phase::Streaming);
        assert_eq!(reply.tail.get_untracked(), "Hello there.");
    }
}
