//! Stable ids: every element that can be pointed at (blocks, questions,
//! options, statements, items, blanks) gets an `id` when it has none. Existing
//! ids are never changed, so edits by the agent or the teacher keep references
//! (and, later, students' answers) attached to the same place.

use std::collections::{HashMap, HashSet};

use super::{
    schema::ID_ELEMENTS,
    tree::{Element, Node},
};

fn prefix(name: &str) -> &'static str {
    match name {
        "h1" | "h2" | "h3" => "h",
        "p" => "p",
        "note" => "note",
        "writing-area" => "wa",
        "exercise" => "ex",
        "question" => "q",
        "option" => "opt",
        "statement" => "st",
        "item" => "it",
        "blank" => "bl",
        "rubric" => "rb",
        "criterion" => "cr",
        _ => "x",
    }
}

/// Gives every id-carrying element without an id the first free `<prefix>-<n>`.
pub fn assign_ids(root: &mut Element) {
    let mut used = HashSet::new();
    collect(root, &mut used);
    let mut next: HashMap<&'static str, u32> = HashMap::new();
    fill(root, &mut used, &mut next);
}

/// Like `assign_ids`, but never gives out an id the previous version of the
/// lesson used: a new paragraph must not take the id of one just removed, or
/// it would pass for that paragraph rewritten (in the change list, and for
/// anything else that points at ids).
pub fn assign_ids_after(root: &mut Element, previous: &Element) {
    assign_ids_among(root, Some(previous), &HashSet::new());
}

/// Like `assign_ids_after`, and never gives out an id in `taken` either:
/// the ids of the lessons linked to this one (its core, its versions),
/// whose changes are carried across by id. A block added to a version and
/// one added to its core must never share one, or the core's would be
/// carried onto the teacher's own.
pub fn assign_ids_among(root: &mut Element, previous: Option<&Element>, taken: &HashSet<String>) {
    let mut used = taken.clone();
    collect(root, &mut used);
    if let Some(previous) = previous {
        collect(previous, &mut used);
    }
    let mut next: HashMap<&'static str, u32> = HashMap::new();
    fill(root, &mut used, &mut next);
}

/// Every id `root` uses.
pub fn ids_of(root: &Element) -> HashSet<String> {
    let mut used = HashSet::new();
    collect(root, &mut used);
    used
}

fn collect(e: &Element, used: &mut HashSet<String>) {
    if let Some(id) = e.id() {
        used.insert(id.to_string());
    }
    for c in e.elements() {
        collect(c, used);
    }
}

fn fill(e: &mut Element, used: &mut HashSet<String>, next: &mut HashMap<&'static str, u32>) {
    let wants_id = ID_ELEMENTS.contains(&e.name.as_str());
    if wants_id && e.id().is_none_or(|id| id.trim().is_empty()) {
        let p = prefix(&e.name);
        let n = next.entry(p).or_insert(0);
        let id = loop {
            *n += 1;
            let candidate = format!("{p}-{n}");
            if !used.contains(&candidate) {
                break candidate;
            }
        };
        used.insert(id.clone());
        // The id goes first among the attributes, where people look for it.
        e.attrs.retain(|(k, _)| k != "id");
        e.attrs.insert(0, ("id".to_string(), id));
    }
    for child in &mut e.children {
        if let Node::Element(c) = child {
            fill(c, used, next);
        }
    }
}
