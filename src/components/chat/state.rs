//! The sidebar's state: the messages on screen and, for each reply, its
//! rendered markdown, its steps and where it stands. `Reply::apply` folds one
//! stream event into it; the same code shows a live reply and a replayed one.

use leptos::prelude::*;

use crate::{
    chat::{
        events::{ChatEvent, ToolArgs, ToolStatus},
        markdown::{self, MarkdownStream},
        message::{ChatMessage, MessageStatus, Role, ToolCallRecord},
    },
    components::lesson_state::LessonState,
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
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub id: String,
    pub label: String,
    pub status: StepStatus,
    /// The arguments in a line (the skill's name, the edit's summary).
    pub detail: String,
}

/// One reply of the assistant.
#[derive(Clone, Copy)]
pub struct Reply {
    /// HTML of finished markdown blocks; never re-rendered.
    pub blocks: RwSignal<Vec<String>>,
    /// HTML of the block still growing.
    pub tail: RwSignal<String>,
    pub steps: RwSignal<Vec<Step>>,
    pub phase: RwSignal<Phase>,
    /// The folded steps are open.
    pub expanded: RwSignal<bool>,
    markdown: StoredValue<MarkdownStream>,
    /// What the teacher asked, for Retry.
    pub asked: StoredValue<String>,
}

impl Reply {
    pub fn new(asked: &str) -> Self {
        Self {
            blocks: RwSignal::new(Vec::new()),
            tail: RwSignal::new(String::new()),
            steps: RwSignal::new(Vec::new()),
            phase: RwSignal::new(Phase::Thinking),
            expanded: RwSignal::new(false),
            markdown: StoredValue::new(MarkdownStream::new()),
            asked: StoredValue::new(asked.to_string()),
        }
    }

    /// A reply from the history.
    pub fn stored(m: &ChatMessage, asked: &str) -> Self {
        let r = Self::new(asked);
        if !m.content.is_empty() {
            r.blocks.set(vec![markdown::render(&m.content)]);
        }
        r.steps.set(m.tool_calls.iter().map(step_of).collect());
        r.phase.set(match m.status {
            MessageStatus::Complete => Phase::Done,
            MessageStatus::Cancelled => Phase::Stopped,
            MessageStatus::Running => Phase::Thinking,
            MessageStatus::Error | MessageStatus::Interrupted => Phase::Failed(
                m.error.as_ref().map(|e| e.message.clone()).unwrap_or_else(|| "This reply did not finish.".into()),
            ),
        });
        r
    }

    /// Folds one event in. Returns a sentence for screen readers, when there is one.
    pub fn apply(&self, event: ChatEvent, lesson: Option<LessonState>) -> Option<String> {
        match event {
            ChatEvent::Text(t) => {
                self.streaming();
                let update = self.markdown.try_update_value(|m| m.push(&t.content))?;
                if let Some(html) = update.finished {
                    self.blocks.update(|b| b.push(html));
                }
                self.tail.set(update.tail);
                None
            }
            ChatEvent::ToolStart(s) => {
                self.streaming();
                let detail = detail_of(&s.tool, &s.args);
                self.steps.update(|steps| steps.push(Step { id: s.id, label: s.display_text, status: StepStatus::Running, detail }));
                None
            }
            ChatEvent::ToolEnd(end) => {
                let mut said = None;
                self.steps.update(|steps| {
                    if let Some(step) = steps.iter_mut().rev().find(|s| s.id == end.id) {
                        step.status = match end.status {
                            ToolStatus::Success => StepStatus::Success,
                            ToolStatus::Error => StepStatus::Failed(end.error.clone().unwrap_or_default()),
                        };
                        if let Some(summary) = &end.summary {
                            step.detail = summary.clone();
                        }
                        said = Some(format!(
                            "{}: {}",
                            step.label,
                            if end.status == ToolStatus::Success { "done" } else { "failed" }
                        ));
                    }
                });
                // The server sends a document with the revision it is (a
                // replayed edit whose document is no longer the lesson's
                // comes without either).
                if let (Some(xml), Some(revision), Some(lesson)) = (end.document_xml, end.revision, lesson) {
                    lesson.apply_revision(revision, xml, end.document_html.unwrap_or_default());
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
            ChatEvent::RoundFinished(_) | ChatEvent::Usage(_) => None,
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

fn detail_of(tool: &str, args: &ToolArgs) -> String {
    match tool {
        "load_skill" => args.brief().skill.map(|s| format!("Skill: {s}")).unwrap_or_default(),
        "edit_document" => args.brief().summary.unwrap_or_default(),
        _ => String::new(),
    }
}

fn step_of(c: &ToolCallRecord) -> Step {
    Step {
        id: c.id.clone(),
        label: c.display_text.clone(),
        status: match c.status {
            ToolStatus::Success => StepStatus::Success,
            ToolStatus::Error => StepStatus::Failed(c.error.clone().unwrap_or_default()),
        },
        detail: c.summary.clone().unwrap_or_else(|| detail_of(&c.tool, &c.args)),
    }
}

/// A message on screen.
#[derive(Clone)]
pub struct UiMessage {
    pub key: u64,
    pub role: Role,
    pub text: String,
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
        assert_eq!(reply.tail.get_untracked(), "<p>Hello there.</p>\n");
    }
}
