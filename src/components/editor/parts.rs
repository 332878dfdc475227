//! The editor's side of exercises: a step on one part (`lesson::parts`)
//! taken on the block, checked by the format's own rules, and the
//! problems found kept where the exercise's fields show them.

use std::collections::HashMap;

use leptos::prelude::*;

use super::Editor;
use crate::lesson::{
    blocks::Block,
    parts::{self, Ids, Path, Step},
    Element,
};

/// The format's checks of an exercise, put here by the exercises' part of
/// the bundle when it loads (`exercise::exercise_view`), so that the
/// editor's own part carries no checks: no exercise can have been changed
/// (or drawn) before that part has loaded.
static CHECKS: std::sync::OnceLock<fn(&Element) -> Vec<(Path, String)>> = std::sync::OnceLock::new();

pub(super) fn install_checks() {
    let _ = CHECKS.set(parts::problems);
}

/// The exercises and writing areas of `blocks`, by id.
pub fn others(blocks: &[Block]) -> HashMap<String, Element> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::Other(e) => Some((b.id().to_string(), e.clone())),
            Block::Text { .. } => None,
        })
        .collect()
}

impl Editor {
    /// `step` on the part at `path` of the block drawn with `key`. Typing
    /// (`draw` false) leaves the fields as the teacher has them; any other
    /// step draws the block anew and puts the focus on `focus` of the part
    /// it answers with. A step that cannot be taken changes nothing and
    /// says why.
    pub fn part(&self, key: u64, path: &[usize], step: Step, draw: bool, focus: &'static str) -> Result<(), String> {
        let Some(Block::Other(mut e)) = self.blocks.with_untracked(|l| l.iter().find(|b| b.key == key).map(|b| b.block.clone())) else {
            return Err("That exercise is no longer there.".into());
        };
        // Only a step that makes parts needs the lesson's ids (typing does not).
        let mut ids = match step {
            Step::Add(_) | Step::MakeBlank { .. } => Ids::of(&self.blocks.with_untracked(|l| super::model::document(&[], l))).tagged(super::model::id_tag()),
            _ => Ids::default(),
        };
        let to = parts::apply(&mut e, path, step, &mut ids)?;
        if !draw {
            self.check(&e);
            self.typed_with(key, |b| *b = Block::Other(e));
            return Ok(());
        }
        let drawn = std::cell::Cell::new(key);
        self.reshape(|ed, list, n| {
            let i = list.iter().position(|b| b.key == key)?;
            list[i].block = Block::Other(e);
            drawn.set(ed.redraw(list, key, n));
            None
        });
        focus_part_later(drawn.get(), &to, focus);
        Ok(())
    }

    /// The exercise's problems, anew; it becomes the one saved when it has none.
    fn check(&self, e: &Element) {
        let Some(problems) = CHECKS.get() else { return };
        let id = e.id().unwrap_or_default().to_string();
        let found = problems(e);
        if found.is_empty() {
            self.good.update_value(|g| {
                g.insert(id.clone(), e.clone());
            });
        }
        let unchanged = self.problems.with_untracked(|p| {
            let mine: Vec<_> = p.iter().filter(|(b, ..)| *b == id).map(|(_, path, said)| (path.clone(), said.clone())).collect();
            mine == found
        });
        if !unchanged {
            self.problems.update(|p| {
                p.retain(|(b, ..)| *b != id);
                p.extend(found.into_iter().map(|(path, said)| (id.clone(), path, said)));
            });
        }
    }

    /// After a change of the blocks' shape (or an undo): the exercises the
    /// teacher changed checked again; problems of removed ones forgotten.
    pub(super) fn recheck(&self) {
        let confirmed = self.confirmed.get_value();
        let (mine, ids): (Vec<Element>, Vec<String>) = self.blocks.with_untracked(|l| {
            let held: Vec<String> = self.problems.with_untracked(|p| p.iter().map(|(id, ..)| id.clone()).collect());
            let mine = l
                .iter()
                .filter_map(|b| match &b.block {
                    Block::Other(e) if b.touched > confirmed || held.iter().any(|h| h == b.block.id()) => Some(e.clone()),
                    _ => None,
                })
                .collect();
            (mine, l.iter().map(|b| b.block.id().to_string()).collect())
        });
        if self.problems.with_untracked(|p| p.iter().any(|(id, ..)| !ids.contains(id))) {
            self.problems.update(|p| p.retain(|(id, ..)| ids.contains(id)));
        }
        for e in &mine {
            self.check(e);
        }
    }

    /// An exercise is kept here for a problem, not yet saved as it stands.
    pub fn held(&self) -> bool {
        self.problems.with_untracked(|p| !p.is_empty())
    }
}

/// The focus to `what` of the part at `path`, in the block drawn with `key`,
/// once it is drawn.
fn focus_part_later(key: u64, path: &Path, what: &'static str) {
    #[cfg(feature = "hydrate")]
    {
        let name = super::exercise::path_name(path);
        // "first": the part's first text (or else its first field): a part
        // added, or the one after a part removed.
        let scope = format!("[data-key=\"{key}\"] [data-part=\"{name}\"]");
        let selectors = if what == "first" {
            vec![format!("{scope} [contenteditable=\"true\"]"), format!("{scope} :is(input, select, button)")]
        } else {
            vec![format!("[data-key=\"{key}\"] [data-focus=\"{name}:{what}\"]")]
        };
        request_animation_frame(move || {
            use leptos::wasm_bindgen::JsCast;
            let found = selectors.iter().find_map(|s| document().query_selector(s).ok().flatten());
            let Some(el) = found.and_then(|e| e.dyn_into::<leptos::web_sys::HtmlElement>().ok()) else { return };
            if el.is_content_editable() {
                super::surface::place_caret(&el, usize::MAX);
            } else {
                let _ = el.focus();
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (key, path, what);
}
