//! The open lesson as the page knows it, shared through context so that the
//! view, the XML editor, the history and (later) the chat sidebar all see the
//! same document and revision, and any of them can update it.

use leptos::prelude::*;

use crate::{
    lesson::{Change, LessonHtml},
    models::Lesson,
};

#[derive(Clone, Copy)]
pub struct LessonState {
    pub id: StoredValue<String>,
    pub title: StoredValue<String>,
    /// The current document.
    pub xml: RwSignal<String>,
    /// `xml` as HTML, rendered by the server.
    pub html: RwSignal<LessonHtml>,
    /// The revision `xml` is; saves are made on top of it.
    pub revision: RwSignal<i64>,
    /// What the teacher is typing in the XML editor, kept across tab switches
    /// and failed saves; `None` when it matches the document.
    pub draft: RwSignal<Option<String>>,
    /// The revision the draft was started from: saving it on top of anything
    /// newer (say, an edit by the assistant meanwhile) is a conflict.
    pub draft_base: RwSignal<i64>,
    /// Bumped whenever a new revision exists, so the history reloads.
    pub history_version: RwSignal<u32>,
    /// How the assistant's edits reach the lesson.
    pub edit_mode: RwSignal<crate::models::EditMode>,
    /// The blocks the assistant's last edit changed, highlighted in the
    /// lesson view while `show_changes` is on.
    pub changed_blocks: RwSignal<Vec<String>>,
    pub show_changes: RwSignal<bool>,
    /// A proposed edit shown in the lesson view instead of the lesson.
    pub preview: RwSignal<Option<LessonHtml>>,
    /// "Student preview": the lesson as students see it.
    pub student: RwSignal<bool>,
    /// Lesson text the teacher chose to ask about ("Ask about this"); it
    /// goes with their next message.
    /// Held packed (`SelectedText::packed`).
    pub asking: RwSignal<Option<String>>,
    /// The editor shows (the Lesson tab, not the student preview or a
    /// proposal's preview).
    pub editing: RwSignal<bool>,
    /// The editor's code has loaded and it is drawn: the server's drawing
    /// of the lesson steps aside.
    pub editor_ready: RwSignal<bool>,
    /// A student's page: the sidebar is their tutor (no edits, no teacher's
    /// live stream, the students' suggestions).
    pub tutor: bool,
}

impl LessonState {
    pub fn new(lesson: &Lesson, html: LessonHtml) -> Self {
        Self {
            id: StoredValue::new(lesson.id.clone()),
            title: StoredValue::new(lesson.title.clone()),
            xml: RwSignal::new(lesson.document_xml.clone()),
            html: RwSignal::new(html),
            revision: RwSignal::new(lesson.revision),
            draft: RwSignal::new(None),
            draft_base: RwSignal::new(lesson.revision),
            history_version: RwSignal::new(0),
            edit_mode: RwSignal::new(lesson.edit_mode),
            changed_blocks: RwSignal::new(Vec::new()),
            show_changes: RwSignal::new(false),
            preview: RwSignal::new(None),
            student: RwSignal::new(false),
            asking: RwSignal::new(None),
            editing: RwSignal::new(true),
            editor_ready: RwSignal::new(false),
            tutor: false,
        }
    }


    /// An edit of the assistant's landed (live, applied or undone): the
    /// lesson shows it, with what it changed highlighted.
    pub fn apply_edit(&self, revision: i64, xml: String, html: LessonHtml, changes: &[Change]) {
        if revision < self.revision.get_untracked() {
            return;
        }
        self.apply_revision(revision, xml, html);
        let mut blocks: Vec<String> = changes.iter().filter_map(|c| c.block.clone()).collect();
        blocks.dedup();
        self.show_changes.set(!blocks.is_empty());
        self.changed_blocks.set(blocks);
        self.preview.set(None);
    }

    /// Records what the teacher typed, remembering where the draft started.
    pub fn edit_draft(&self, text: String) {
        if self.draft.with_untracked(Option::is_none) {
            self.draft_base.set(self.revision.get_untracked());
        }
        self.draft.set(Some(text));
    }

    /// The revision a save of the editor's text must be made on top of.
    pub fn save_base(&self) -> i64 {
        if self.draft.with_untracked(Option::is_some) {
            self.draft_base.get_untracked()
        } else {
            self.revision.get_untracked()
        }
    }

    /// A new revision was stored (by the teacher or the agent). One older
    /// than the page's is ignored: the page never goes back by itself.
    pub fn apply_revision(&self, revision: i64, xml: String, html: LessonHtml) {
        if revision < self.revision.get_untracked() {
            return;
        }
        self.revision.set(revision);
        self.xml.set(xml);
        self.html.set(html);
        self.history_version.update(|v| *v += 1);
    }
}

/// "2026-11-22T05:51:17.123Z" → "2026-11-22 05:51".
pub fn short_time(iso: &str) -> String {
    iso.get(..16).unwrap_or(iso).replace('T', " ")
}
