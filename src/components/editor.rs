//! The lesson editor: the teacher writes the lesson where it stands.
//! Headings, paragraphs and notes are typed in place (bold and italic,
//! Enter for a new paragraph, Backspace at the start to join, a block's type
//! changed from its tools or with Ctrl+Alt+0–3); every block moves up and
//! down (its buttons, or Alt+↑/↓) and is removed; new blocks are added
//! below any block, or by typing `/` in an empty one. Exercises show as
//! students meet them and move or go whole.
//!
//! What is typed is saved by itself a moment later (`save`), merged on the
//! server into whatever the assistant or a colleague saved meanwhile; a
//! version arriving from them changes the blocks the teacher is not typing
//! in (`model::adopt`) and offers, never forces, its change to one they are.
//!
//! Its code loads when the lesson page is live (`#[lazy]` in `lesson_page`):
//! until then the page shows the server's drawing of the same lesson.

mod exercise;
pub mod model;
mod parts;
pub mod paste;
mod save;
pub mod surface;
mod view;

use std::collections::HashSet;

use leptos::prelude::*;

use self::model::EdBlock;
use super::lesson_state::LessonState;
use crate::lesson::{
    blocks::{self, Block, Doc, Run, TextKind},
    ExerciseKind,
};

pub use view::LessonEditor;

/// How the teacher's typing stands with the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveState {
    Saved,
    /// Typed and not yet confirmed (waiting a moment, or on its way).
    Saving,
    /// The save failed; it is tried again by itself.
    Retrying(String),
    /// The server refused the document; the text stays as typed.
    Refused(String),
}

/// One step the teacher can take back (Ctrl+Z): the blocks before it.
#[derive(Clone)]
struct Snapshot {
    blocks: Vec<EdBlock>,
}

/// The editor's state, shared by its views and handlers.
#[derive(Clone, Copy)]
pub struct Editor {
    state: LessonState,
    blocks: RwSignal<Vec<EdBlock>>,
    /// The lesson's own attributes, from the version last arrived.
    attrs: StoredValue<Vec<(String, String)>>,
    /// The version the teacher's unsaved changes are made on.
    base: StoredValue<(i64, Doc)>,
    /// Edits made so far; each block remembers the count when touched.
    edits: StoredValue<u64>,
    /// `edits` when the last confirmed save was sent.
    confirmed: StoredValue<u64>,
    /// Blocks the teacher removed, with `edits` at the time.
    removed: StoredValue<Vec<(String, u64)>>,
    next_key: StoredValue<u64>,
    pub status: RwSignal<SaveState>,
    /// A save is on its way; another waits for it.
    sending: StoredValue<bool>,
    /// The document that save carries: its own version, heard of before
    /// its answer (the lesson's live updates), is not someone else's change.
    in_flight: StoredValue<Option<Doc>>,
    /// The pending save's turn: a newer keystroke makes an older timer do nothing.
    timer: StoredValue<u64>,
    undo: StoredValue<Vec<Snapshot>>,
    redo: StoredValue<Vec<Snapshot>>,
    /// An undo point was taken for the typing under way.
    typing: StoredValue<bool>,
    /// Changes others made to blocks the teacher is changing, offered.
    pub offers: RwSignal<Vec<Block>>,
    /// What a paste left out, said once under the lesson.
    pub notice: RwSignal<String>,
    /// The format's problems with exercises the teacher is changing: the
    /// block's id, the part's path and what is wrong. Such an exercise is
    /// kept here, and saved as it last was right, until it is right again.
    pub problems: RwSignal<Vec<(String, crate::lesson::parts::Path, String)>>,
    /// Each exercise as it last was right (the server's, or the teacher's).
    good: StoredValue<std::collections::HashMap<String, crate::lesson::Element>>,
    /// The block the caret is in, and the one under the pointer: only these
    /// two have their tools drawn (`view::BlockView`). On a long lesson the
    /// tools of every block, each with its lists of block types, were most
    /// of the page's elements, and the browser's work for each keystroke
    /// grew with them.
    pub focused: RwSignal<Option<u64>>,
    pub pointed: RwSignal<Option<u64>>,
}

impl Editor {
    pub fn new(state: LessonState) -> Self {
        let doc = surface::read_lesson(&state.xml.get_untracked()).map(|r| Doc::from_root(&r)).unwrap_or_default();
        let blocks: Vec<EdBlock> = doc.blocks.iter().enumerate().map(|(k, b)| EdBlock { key: k as u64 + 1, block: b.clone(), touched: 0 }).collect();
        let next = blocks.len() as u64 + 1;
        let good = parts::others(&doc.blocks);
        Self {
            state,
            blocks: RwSignal::new(blocks),
            attrs: StoredValue::new(doc.attrs.clone()),
            base: StoredValue::new((state.revision.get_untracked(), doc)),
            edits: StoredValue::new(0),
            confirmed: StoredValue::new(0),
            removed: StoredValue::new(Vec::new()),
            next_key: StoredValue::new(next),
            status: RwSignal::new(SaveState::Saved),
            sending: StoredValue::new(false),
            in_flight: StoredValue::new(None),
            timer: StoredValue::new(0),
            undo: StoredValue::new(Vec::new()),
            redo: StoredValue::new(Vec::new()),
            typing: StoredValue::new(false),
            offers: RwSignal::new(Vec::new()),
            notice: RwSignal::new(String::new()),
            problems: RwSignal::new(Vec::new()),
            good: StoredValue::new(good),
            focused: RwSignal::new(None),
            pointed: RwSignal::new(None),
        }
    }

    fn key(&self) -> u64 {
        self.next_key.update_value(|k| *k += 1);
        self.next_key.get_value()
    }

    /// Counts an edit and returns its number.
    fn edit(&self) -> u64 {
        self.edits.update_value(|n| *n += 1);
        self.edits.get_value()
    }

    /// The document as it is saved: an exercise with a problem goes as it
    /// last was right (or not at all, when it never was).
    fn doc(&self) -> Doc {
        let mut doc = self.blocks.with_untracked(|b| model::document(&self.attrs.get_value(), b));
        let held: HashSet<String> = self.problems.with_untracked(|p| p.iter().map(|(id, ..)| id.clone()).collect());
        if !held.is_empty() {
            let good = self.good.get_value();
            doc.blocks = doc
                .blocks
                .into_iter()
                .filter_map(|b| if held.contains(b.id()) { good.get(b.id()).cloned().map(Block::Other) } else { Some(b) })
                .collect();
        }
        doc
    }

    /// Typing (or a mark) changed the runs of the block drawn with `key`;
    /// its element already shows them, so nothing is drawn.
    pub fn typed(&self, key: u64, runs: Vec<Run>) {
        self.typed_with(key, |b| {
            if let Block::Text { runs: r, .. } = b {
                *r = runs;
            }
        });
    }

    /// Typing changed the block drawn with `key` (`change` tells the
    /// model); one undo point is taken per burst of typing.
    fn typed_with(&self, key: u64, change: impl FnOnce(&mut Block)) {
        if !self.typing.get_value() {
            self.checkpoint();
            self.typing.set_value(true);
        }
        let n = self.edit();
        self.blocks.update_untracked(|list| {
            if let Some(b) = list.iter_mut().find(|b| b.key == key) {
                change(&mut b.block);
                b.touched = n;
            }
        });
        self.schedule();
    }

    /// An undo point before a change of the blocks' shape.
    fn checkpoint(&self) {
        let blocks = self.blocks.get_untracked();
        self.undo.update_value(|u| {
            u.push(Snapshot { blocks });
            if u.len() > 200 {
                u.remove(0);
            }
        });
        self.redo.update_value(Vec::clear);
    }

    /// Changes the list of blocks: an undo point first, then `change`, given
    /// this edit's number (for the blocks it touches), whose answer (a
    /// block's key and a caret offset) is where the caret goes.
    pub fn reshape(&self, change: impl FnOnce(&Self, &mut Vec<EdBlock>, u64) -> Option<(u64, usize)>) {
        self.checkpoint();
        self.typing.set_value(false);
        let mut list = self.blocks.get_untracked();
        let before: HashSet<String> = list.iter().map(|b| b.block.id().to_string()).collect();
        let n = self.edit();
        let caret = change(self, &mut list, n);
        let after: HashSet<String> = list.iter().map(|b| b.block.id().to_string()).collect();
        self.removed.update_value(|r| {
            r.retain(|(id, _)| !after.contains(id));
            r.extend(before.difference(&after).map(|id| (id.clone(), n)));
        });
        self.blocks.set(list);
        self.recheck();
        if let Some((key, at)) = caret {
            self.focused.set(Some(key));
            focus_later(key, at);
        }
        self.schedule();
    }

    /// Marks the block `key` as changed by the edit `n` and draws it anew.
    fn redraw(&self, list: &mut [EdBlock], key: u64, n: u64) -> u64 {
        let fresh = self.key();
        if let Some(b) = list.iter_mut().find(|b| b.key == key) {
            b.key = fresh;
            b.touched = n;
        }
        fresh
    }

    /// Enter with the selection `start..end` in the block `key`: the
    /// selected text goes, and the text after it becomes a new block below
    /// (a paragraph after a heading). Enter at the very start of a block
    /// with text puts an empty one above it instead, and the caret stays.
    pub fn split(&self, key: u64, start: usize, end: usize) {
        self.reshape(|ed, list, n| {
            let i = list.iter().position(|b| b.key == key)?;
            let Block::Text { kind, runs, .. } = &list[i].block else { return None };
            let kind = *kind;
            let new_kind = if matches!(kind, TextKind::Note) { kind } else { TextKind::P };
            let id = model::fresh_id(&model::document(&[], list), new_kind.id_prefix());
            if start == 0 && end == 0 && !runs.is_empty() {
                let fresh = ed.key();
                list.insert(i, EdBlock { key: fresh, block: Block::Text { id, kind: new_kind, runs: Vec::new() }, touched: n });
                return Some((key, 0));
            }
            let before = blocks::split_at(runs, start.min(end)).0;
            let after = blocks::split_at(runs, start.max(end)).1;
            if let Block::Text { runs, .. } = &mut list[i].block {
                *runs = before;
            }
            ed.redraw(list, key, n);
            let fresh = ed.key();
            list.insert(i + 1, EdBlock { key: fresh, block: Block::Text { id, kind: new_kind, runs: after }, touched: n });
            Some((fresh, 0))
        });
    }

    /// Backspace at the start of the block `key`: joined onto the text block
    /// before it. An empty block after an exercise is removed.
    pub fn join_previous(&self, key: u64) {
        self.reshape(|ed, list, n| {
            let i = list.iter().position(|b| b.key == key)?;
            let Block::Text { runs: mine, .. } = list[i].block.clone() else { return None };
            if i == 0 {
                return None;
            }
            match &mut list[i - 1].block {
                Block::Text { runs, .. } => {
                    let at = blocks::len16(runs);
                    *runs = blocks::join(runs, &mine);
                    let prev = list[i - 1].key;
                    list.remove(i);
                    Some((ed.redraw(list, prev, n), at))
                }
                Block::Other(_) if mine.is_empty() => {
                    list.remove(i);
                    list.get(i).or(list.get(i - 1)).map(|b| (b.key, 0))
                }
                Block::Other(_) => None,
            }
        });
    }

    /// The block `key` becomes a `kind`, keeping its text.
    pub fn convert(&self, key: u64, kind: TextKind) {
        self.reshape(|ed, list, n| {
            let b = list.iter_mut().find(|b| b.key == key)?;
            let Block::Text { kind: k, runs, .. } = &mut b.block else { return None };
            *k = kind;
            let at = blocks::len16(runs);
            Some((ed.redraw(list, key, n), at))
        });
    }

    /// A new block of `what` below the block `key` (at the top when `key`
    /// is 0). With `into_empty` (a type picked for an empty block, or `/`),
    /// an empty text block is replaced by it instead; "Add below" always adds.
    pub fn insert(&self, key: u64, what: NewBlock, into_empty: bool) {
        self.reshape(|ed, list, n| {
            let block = what.make(&model::document(&[], list));
            let i = list.iter().position(|b| b.key == key);
            let empty = into_empty && i.is_some_and(|i| matches!(&list[i].block, Block::Text { runs, .. } if runs.is_empty()));
            let fresh = ed.key();
            let new = EdBlock { key: fresh, block, touched: n };
            match i {
                Some(i) if empty => list[i] = new,
                Some(i) => list.insert(i + 1, new),
                None => list.insert(0, new),
            }
            Some((fresh, 0))
        });
    }

    /// The block `key` one place up (`-1`) or down (`1`).
    pub fn shift(&self, key: u64, by: isize, caret: usize) {
        self.reshape(|_, list, n| {
            let i = list.iter().position(|b| b.key == key)?;
            let j = i.checked_add_signed(by).filter(|j| *j < list.len())?;
            list.swap(i, j);
            list[j].touched = n;
            Some((key, caret))
        });
    }

    /// Removes the block `key`; the caret goes to the one after it.
    pub fn delete(&self, key: u64) {
        self.reshape(|_, list, _| {
            let i = list.iter().position(|b| b.key == key)?;
            list.remove(i);
            list.get(i).or(list.last()).map(|b| (b.key, 0))
        });
    }

    /// Ctrl+Z: the blocks as they were before the last step.
    pub fn undo(&self) {
        self.step(self.undo, self.redo);
    }

    /// Ctrl+Shift+Z: the step taken back, made again.
    pub fn redo(&self) {
        self.step(self.redo, self.undo);
    }

    fn step(&self, from: StoredValue<Vec<Snapshot>>, to: StoredValue<Vec<Snapshot>>) {
        let Some(snap) = from.try_update_value(Vec::pop).flatten() else { return };
        to.update_value(|t| t.push(Snapshot { blocks: self.blocks.get_untracked() }));
        self.typing.set_value(false);
        let n = self.edit();
        let now: HashSet<String> = self.blocks.with_untracked(|l| l.iter().map(|b| b.block.id().to_string()).collect());
        let mut list = snap.blocks;
        let kept: HashSet<String> = list.iter().map(|b| b.block.id().to_string()).collect();
        let mut first_changed = None;
        let current = self.blocks.get_untracked();
        for b in &mut list {
            if !current.iter().any(|c| c.key == b.key && c.block == b.block) {
                b.key = self.key();
                b.touched = n;
                first_changed.get_or_insert(b.key);
            }
        }
        self.removed.update_value(|r| {
            r.retain(|(id, _)| !kept.contains(id));
            r.extend(now.difference(&kept).map(|id| (id.clone(), n)));
        });
        // The caret goes to the first block the step changed, or stays in
        // the block it was in (which may have moved).
        let caret = first_changed.and_then(|k| list.iter().find(|b| b.key == k)).map(|b| match &b.block {
            Block::Text { runs, .. } => (b.key, blocks::len16(runs)),
            Block::Other(_) => (b.key, 0),
        });
        let caret = caret.or_else(focused);
        self.blocks.set(list);
        self.recheck();
        if let Some((k, at)) = caret {
            self.focused.set(Some(k));
            focus_later(k, at);
        }
        self.schedule();
    }

    /// A newer version of the lesson arrived (the assistant, a colleague,
    /// another tab, or this editor's own save): the blocks the teacher has
    /// not touched since the last confirmed save become its.
    pub fn arrive(&self, revision: i64, xml: &str) {
        let Some(root) = surface::read_lesson(xml) else { return };
        let incoming = Doc::from_root(&root);
        let confirmed = self.confirmed.get_value();
        let removed: HashSet<String> = self.removed.with_value(|r| r.iter().filter(|(_, n)| *n > confirmed).map(|(id, _)| id.clone()).collect());
        let mut next = self.next_key.get_value();
        // An exercise kept back for a problem is still the teacher's to finish.
        let held: HashSet<String> = self.problems.with_untracked(|p| p.iter().map(|(id, ..)| id.clone()).collect());
        let got = self.base.with_value(|(_, base)| {
            self.blocks.with_untracked(|local| model::adopt(local, base, &incoming, |b| b.touched > confirmed || held.contains(b.block.id()), &removed, &mut next))
        });
        self.good.update_value(|g| {
            for (id, e) in parts::others(&incoming.blocks) {
                if !held.contains(&id) {
                    g.insert(id, e);
                }
            }
        });
        self.next_key.set_value(next);
        self.attrs.set_value(incoming.attrs.clone());
        self.base.set_value((revision, incoming));
        if got.blocks != self.blocks.get_untracked() {
            self.blocks.set(got.blocks);
        }
        let ours = |b: &Block| self.in_flight.with_value(|d| d.as_ref().is_some_and(|d| d.blocks.contains(b)));
        let offers: Vec<Block> = got.offers.into_iter().filter(|b| !ours(b)).collect();
        if !offers.is_empty() {
            self.offers.update(|o| {
                o.retain(|b| !offers.iter().any(|x| x.id() == b.id()));
                o.extend(offers);
            });
        }
    }

    /// Takes an offered version of a block in place of the teacher's.
    pub fn take_offer(&self, id: &str) {
        let Some(theirs) = self.offers.with_untracked(|o| o.iter().find(|b| b.id() == id).cloned()) else { return };
        self.offers.update(|o| o.retain(|b| b.id() != id));
        self.reshape(|ed, list, n| {
            let i = list.iter().position(|b| b.block.id() == id)?;
            list[i].block = theirs;
            let key = list[i].key;
            Some((ed.redraw(list, key, n), 0))
        });
    }

    /// Keeps the teacher's version of a block over the one offered.
    pub fn keep_mine(&self, id: &str) {
        self.offers.update(|o| o.retain(|b| b.id() != id));
    }
}

/// What "Add a block" and `/` can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewBlock {
    Text(TextKind),
    WritingArea,
    Exercise(ExerciseKind),
}

impl NewBlock {
    pub const ALL: [NewBlock; 12] = [
        Self::Text(TextKind::P),
        Self::Text(TextKind::H1),
        Self::Text(TextKind::H2),
        Self::Text(TextKind::H3),
        Self::Text(TextKind::Note),
        Self::WritingArea,
        Self::Exercise(ExerciseKind::MultipleChoice),
        Self::Exercise(ExerciseKind::FillBlanks),
        Self::Exercise(ExerciseKind::TrueFalse),
        Self::Exercise(ExerciseKind::Sequencing),
        Self::Exercise(ExerciseKind::ShortAnswer),
        Self::Exercise(ExerciseKind::Writing),
    ];

    pub fn label(self) -> &'static str {
        match self {
            Self::Text(k) => k.label(),
            Self::WritingArea => "Writing area",
            Self::Exercise(ExerciseKind::MultipleChoice) => "Exercise: multiple choice",
            Self::Exercise(ExerciseKind::FillBlanks) => "Exercise: fill in the blanks",
            Self::Exercise(ExerciseKind::TrueFalse) => "Exercise: true or false",
            Self::Exercise(ExerciseKind::Sequencing) => "Exercise: put in order",
            Self::Exercise(ExerciseKind::ShortAnswer) => "Exercise: short answer",
            Self::Exercise(ExerciseKind::Writing) => "Exercise: writing task",
        }
    }

    /// Its value in a `<select>`.
    pub fn value(self) -> &'static str {
        match self {
            Self::Text(k) => k.tag(),
            Self::WritingArea => "writing-area",
            Self::Exercise(k) => k.name(),
        }
    }

    pub fn from_value(v: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|n| n.value() == v)
    }

    /// The new block, empty, with an id no block of `doc` uses.
    fn make(self, doc: &Doc) -> Block {
        match self {
            Self::Text(kind) => Block::Text { id: model::fresh_id(doc, kind.id_prefix()), kind, runs: Vec::new() },
            Self::WritingArea => {
                let mut e = crate::lesson::Element::new("writing-area");
                e.set_attr("id", model::fresh_id(doc, "wa"));
                e.set_attr("lines", "5");
                Block::Other(e)
            }
            Self::Exercise(kind) => Block::Other(crate::lesson::parts::new_exercise(kind, &mut crate::lesson::parts::Ids::of(doc).tagged(model::id_tag()))),
        }
    }
}

/// The block the caret is in, and where in it.
fn focused() -> Option<(u64, usize)> {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let active = leptos::prelude::document().active_element()?;
        let block = active.closest(".editor .block").ok()??;
        let key = block.get_attribute("data-key")?.parse().ok()?;
        let at = active.dyn_ref::<leptos::web_sys::Node>().and_then(surface::caret).map_or(0, |c| c.0);
        Some((key, at))
    }
    #[cfg(not(feature = "hydrate"))]
    None
}

/// Puts the caret in the block drawn with `key` once it is drawn: in the
/// microtasks that draw it, before the browser hands the page its next key.
/// (Waiting for the next frame let the keys typed meanwhile, say the first
/// letter of a heading just made with Ctrl+Alt+2, go to the block it
/// replaced, and be lost.) A block not drawn by then is looked for again at
/// the next frame.
fn focus_later(key: u64, at: usize) {
    #[cfg(feature = "hydrate")]
    focus_soon(key, at, FOCUS_TRIES);
    #[cfg(not(feature = "hydrate"))]
    let _ = (key, at);
}

#[cfg(feature = "hydrate")]
thread_local! {
    /// The exercise to take the caret once its fields are drawn.
    static FOCUS_WHEN_DRAWN: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The exercise drawn with `key` has its fields: the caret goes to the
/// first if it was asked for before they were there.
pub(super) fn exercise_drawn(key: u64) {
    #[cfg(feature = "hydrate")]
    if FOCUS_WHEN_DRAWN.get() == Some(key) {
        FOCUS_WHEN_DRAWN.set(None);
        focus_later(key, 0);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = key;
}

/// How many microtasks `focus_later` looks in before it waits for a frame.
#[cfg(feature = "hydrate")]
const FOCUS_TRIES: u32 = 32;

#[cfg(feature = "hydrate")]
fn focus_soon(key: u64, at: usize, tries: u32) {
    leptos::prelude::queue_microtask(move || {
        if focus_now(key, at) {
            return;
        }
        if tries > 0 {
            focus_soon(key, at, tries - 1);
        } else {
            request_animation_frame(move || {
                focus_now(key, at);
            });
        }
    });
}

/// Puts the caret in block `key` (or on its first control), if it is drawn.
/// An exercise whose fields are not drawn yet (its part of the bundle still
/// loading) takes the caret when they are (`exercise_drawn`).
#[cfg(feature = "hydrate")]
fn focus_now(key: u64, at: usize) -> bool {
    if let Some(el) = surface::editable(key) {
        surface::place_caret(&el, at);
        return true;
    }
    let document = leptos::prelude::document();
    let found = |s: &str| document.query_selector(s).ok().flatten().is_some();
    if found(&format!("[data-key=\"{key}\"][data-exercise]")) && !found(&format!("[data-key=\"{key}\"] .exercise-edit")) {
        FOCUS_WHEN_DRAWN.set(Some(key));
        return true;
    }
    let control = document
        .query_selector(&format!("[data-key=\"{key}\"] .block-tools select, [data-key=\"{key}\"] .block-tools button"))
        .ok()
        .flatten();
    use leptos::wasm_bindgen::JsCast;
    match control.and_then(|el| el.dyn_into::<leptos::web_sys::HtmlElement>().ok()) {
        Some(el) => el.focus().is_ok(),
        None => false,
    }
}
