//! Putting one edit on top of another: the changes from `base` to `ours` are
//! made to `theirs` (a later version of the same lesson), block by block,
//! matched by id. Applying a proposal made on an older revision, and undoing
//! an edit that later edits followed, are both this.
//!
//! Blocks changed on both sides conflict, and then nothing is merged: the
//! answer is the changes of `ours` that touch those blocks. Blocks changed on
//! one side only are taken from that side; blocks that `ours` added or moved
//! go after the block they follow in `ours`.

use std::collections::{HashMap, HashSet};

use super::{
    change::Change,
    changes::{self, changes, match_ids},
    ids::assign_ids_after,
    tree::{Element, Node},
};

/// `theirs` with the changes from `base` to `ours` made to it, or the changes
/// of `ours` that collide with changes already in `theirs`.
pub fn merge(base: &Element, ours: &Element, theirs: &Element) -> Result<Element, Vec<Change>> {
    let b = blocks(base);
    let o = blocks(ours);
    let t = blocks(theirs);
    let ours_changed = changed(&b, &o);
    let theirs_changed = changed(&b, &t);
    let ours_moved = moved(base, ours);

    // Only blocks that were there before can clash: two new blocks that
    // happen to share a new id are two blocks.
    // Two sides that made the same change agree.
    let mut clash: HashSet<&str> = ours_changed
        .intersection(&theirs_changed)
        .copied()
        .filter(|id| b.contains_key(id))
        .filter(|id| !matches!((o.get(id), t.get(id)), (Some(x), Some(y)) if super::changes::same(x, y)) && (o.contains_key(id) || t.contains_key(id)))
        .collect();
    // A block that `ours` moved is in the way of theirs only if theirs removed it.
    clash.extend(ours_moved.iter().copied().filter(|id| !t.contains_key(id)));
    let attr_clash = ["title", "lang"].into_iter().any(|a| {
        let (x, y, z) = (base.attr(a), ours.attr(a), theirs.attr(a));
        x != y && x != z && y != z
    });
    if !clash.is_empty() || attr_clash {
        let hit = changes(base, ours)
            .into_iter()
            .filter(|c| c.block.as_deref().map_or(attr_clash, |id| clash.contains(id)))
            .collect();
        return Err(hit);
    }

    // Theirs, in their order, with ours' version of each block ours edited
    // and without the blocks ours removed or moved.
    let mut placed: Vec<Element> = Vec::new();
    for e in theirs.elements() {
        match e.id() {
            Some(id) if ours_moved.contains(id) => {}
            Some(id) if b.contains_key(id) && ours_changed.contains(id) => placed.extend(o.get(id).map(|mine| (*mine).clone())),
            _ => placed.push(e.clone()),
        }
    }
    // Then every block ours added or moved, after the block it follows in
    // ours. A new block whose ids theirs uses already gives them up.
    let their_ids = all_ids(theirs);
    let ours_blocks: Vec<&Element> = ours.elements().collect();
    for (k, e) in ours_blocks.iter().enumerate() {
        let Some(id) = e.id() else { continue };
        let added = !b.contains_key(id);
        if !added && !ours_moved.contains(id) {
            continue;
        }
        let after = ours_blocks[..k].iter().rev().filter_map(|p| p.id()).find_map(|pid| placed.iter().position(|x| x.id() == Some(pid)));
        let mut block = (*e).clone();
        if added {
            drop_ids(&mut block, &their_ids);
        }
        placed.insert(after.map_or(0, |i| i + 1), block);
    }

    let mut root = theirs.clone();
    for a in ["title", "lang"] {
        if base.attr(a) != ours.attr(a) {
            root.attrs.retain(|(k, _)| k != a);
            if let Some(v) = ours.attr(a) {
                root.attrs.push((a.to_string(), v.to_string()));
            }
        }
    }
    root.children = placed.into_iter().map(Node::Element).collect();
    dedupe_ids(&mut root, theirs);
    Ok(root)
}

/// Blocks by id (blocks without one cannot be matched and are left out).
fn blocks(root: &Element) -> HashMap<&str, &Element> {
    root.elements().filter_map(|e| e.id().map(|id| (id, e))).collect()
}

/// Ids of the blocks added, removed or edited from `from` to `to`.
fn changed<'a>(from: &HashMap<&'a str, &Element>, to: &HashMap<&'a str, &Element>) -> HashSet<&'a str> {
    let mut out = HashSet::new();
    for (id, e) in from {
        match to.get(id) {
            None => {
                out.insert(*id);
            }
            Some(f) if !super::changes::same(e, f) => {
                out.insert(*id);
            }
            _ => {}
        }
    }
    for id in to.keys() {
        if !from.contains_key(id) {
            out.insert(*id);
        }
    }
    out
}

/// Ids of blocks in both versions whose place among the others changed (as
/// the change list finds moves).
fn moved<'a>(base: &Element, ours: &'a Element) -> HashSet<&'a str> {
    let (olds, news): (Vec<&Element>, Vec<&'a Element>) = (base.elements().collect(), ours.elements().collect());
    let m = match_ids(&olds, &news, |_, _| true);
    let moved = changes::moved(&m);
    news.iter().zip(&m.old_of_new).filter(|(_, i)| i.is_some_and(|i| moved.contains(&i))).filter_map(|(n, _)| n.id()).collect()
}

/// Every id in a lesson.
fn all_ids(root: &Element) -> HashSet<String> {
    fn walk(e: &Element, out: &mut HashSet<String>) {
        if let Some(id) = e.id() {
            out.insert(id.to_string());
        }
        e.elements().for_each(|c| walk(c, out));
    }
    let mut out = HashSet::new();
    walk(root, &mut out);
    out
}

/// Takes the ids in `taken` off an element and everything in it.
fn drop_ids(e: &mut Element, taken: &HashSet<String>) {
    if e.id().is_some_and(|id| taken.contains(id)) {
        e.attrs.retain(|(k, _)| k != "id");
    }
    for c in &mut e.children {
        if let Node::Element(x) = c {
            drop_ids(x, taken);
        }
    }
}

/// Both sides may have given out the same new id inside blocks they edited;
/// the later one gives it up. Then every element without an id gets a fresh
/// one that no version used.
fn dedupe_ids(root: &mut Element, theirs: &Element) {
    fn walk(e: &mut Element, seen: &mut HashSet<String>) {
        if let Some(id) = e.id().map(str::to_string) {
            if !seen.insert(id) {
                e.attrs.retain(|(k, _)| k != "id");
            }
        }
        for c in &mut e.children {
            if let Node::Element(x) = c {
                walk(x, seen);
            }
        }
    }
    walk(root, &mut HashSet::new());
    assign_ids_after(root, theirs);
}

#[cfg(test)]
mod tests;
