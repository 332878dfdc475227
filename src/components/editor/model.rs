//! The editor's list of blocks and what happens to it when a version saved
//! elsewhere arrives: plain data, no DOM, tested on its own.
//!
//! Each block carries a `key` for the view (a new key draws the block anew;
//! the same key leaves its element, and the caret in it, alone) and
//! `touched`, the editor's count of edits when the teacher last changed it:
//! a block touched after the last save the server confirmed holds typing
//! the server has not got yet, and an arriving version never overwrites it.

use std::collections::HashSet;

use crate::lesson::blocks::{join, len16, split_at, Block, Doc, Run, TextKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdBlock {
    pub key: u64,
    pub block: Block,
    pub touched: u64,
}

/// The tag this page's editor puts in every id it makes (`p-k3f9a-1`), so
/// that the server (`p-4`), a colleague's editor and this teacher's other
/// tabs never make the same id. Two new blocks with one id used to meet when
/// versions were merged: the server renamed one, and the editor, which knew
/// it by its old id, then showed the teacher's block twice and lost the
/// other. Random per page load; fixed in tests.
pub fn id_tag() -> &'static str {
    thread_local!(static TAG: &'static str = Box::leak(make_tag().into_boxed_str()));
    TAG.with(|t| *t)
}

#[cfg(feature = "hydrate")]
fn make_tag() -> String {
    const DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    // Five letters and digits from the browser's random numbers: 60 million tags.
    (0..5).map(|_| DIGITS[((js_sys::Math::random() * 36.0) as usize).min(35)] as char).collect()
}

#[cfg(not(feature = "hydrate"))]
fn make_tag() -> String {
    // The server only draws the editor; tests see a fixed tag.
    "t".into()
}

/// An id for a new block starting `prefix` that no element of `doc` uses,
/// with this page's tag.
pub fn fresh_id(doc: &Doc, prefix: &str) -> String {
    doc.new_id_with(&format!("{prefix}-{}", id_tag()))
}

/// What arriving at a new version did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Adopted {
    pub blocks: Vec<EdBlock>,
    /// Blocks the teacher is changing that the new version changed too:
    /// their version, offered beside the teacher's, never put in its place.
    pub offers: Vec<Block>,
}

/// `local` moved onto `incoming`, a newer version of the lesson: blocks the
/// teacher has not touched since the last confirmed save (`keep` says which
/// they have) become incoming's, in incoming's order; blocks they have
/// touched stay as typed, after the block they follow locally; blocks they
/// removed (`removed`) stay removed. `base` is the version the teacher's
/// changes started from, to tell what incoming changed. `next_key` gives
/// out keys for blocks drawn anew.
pub fn adopt(local: &[EdBlock], base: &Doc, incoming: &Doc, keep: impl Fn(&EdBlock) -> bool, removed: &HashSet<String>, next_key: &mut u64) -> Adopted {
    let kept: Vec<&EdBlock> = local.iter().filter(|b| keep(b)).collect();
    let kept_ids: HashSet<&str> = kept.iter().map(|b| b.block.id()).filter(|id| !id.is_empty()).collect();
    let mut out: Vec<EdBlock> = Vec::with_capacity(incoming.blocks.len() + kept.len());
    let mut offers = Vec::new();
    // A kept block the teacher did not move stays where incoming has it;
    // one they moved goes after the block it follows locally (below).
    let before_in = |blocks: &[&str], id: &str| blocks.iter().position(|b| *b == id).and_then(|i| i.checked_sub(1)).map(|i| blocks[i].to_string());
    let base_ids: Vec<&str> = base.blocks.iter().map(Block::id).collect();
    let local_ids: Vec<&str> = local.iter().map(|b| b.block.id()).collect();
    let moved = |id: &str| before_in(&base_ids, id) != before_in(&local_ids, id) || !base_ids.contains(&id);
    let mut placed: HashSet<u64> = HashSet::new();
    for block in &incoming.blocks {
        let id = block.id();
        if kept_ids.contains(id) {
            let before = base.blocks.iter().find(|b| b.id() == id);
            let mine = kept.iter().find(|b| b.block.id() == id);
            if before != Some(block) && mine.map(|m| &m.block) != Some(block) {
                offers.push(block.clone());
            }
            if let Some(m) = mine.filter(|_| !moved(id)) {
                out.push((*m).clone());
                placed.insert(m.key);
            }
            continue;
        }
        if removed.contains(id) {
            continue;
        }
        match local.iter().find(|b| b.block.id() == id && &b.block == block) {
            Some(same) => out.push(same.clone()),
            None => {
                *next_key += 1;
                out.push(EdBlock { key: *next_key, block: block.clone(), touched: 0 });
            }
        }
    }
    for (k, mine) in local.iter().enumerate() {
        if !keep(mine) || placed.contains(&mine.key) {
            continue;
        }
        let after = local[..k].iter().rev().find_map(|p| out.iter().position(|x| x.key == p.key || (!p.block.id().is_empty() && x.block.id() == p.block.id())));
        out.insert(after.map_or(0, |i| i + 1), mine.clone());
    }
    Adopted { blocks: out, offers }
}

/// The document the editor would save: the blocks under the lesson's own
/// attributes (from the version last arrived).
pub fn document(attrs: &[(String, String)], blocks: &[EdBlock]) -> Doc {
    Doc { attrs: attrs.to_vec(), blocks: blocks.iter().map(|b| b.block.clone()).collect() }
}

/// Blocks pasted at the selection `start..end` of the text block at `i`:
/// the first joins the text before the selection (and keeps the block's id,
/// and its kind when there is text before), the last the text after it; the
/// blocks between go in as they came, with ids no block uses. Each is marked
/// touched by the edit `n` and drawn with a key from `key`. The answer is
/// where the caret goes: the end of what was pasted.
pub fn paste(list: &mut Vec<EdBlock>, i: usize, (start, end): (usize, usize), pasted: Vec<(TextKind, Vec<Run>)>, n: u64, mut key: impl FnMut() -> u64) -> Option<(u64, usize)> {
    let Block::Text { id, kind, runs } = list.get(i)?.block.clone() else { return None };
    let (start, end) = (start.min(end), start.max(end));
    let before = split_at(&runs, start).0;
    let after = split_at(&runs, end).1;
    let count = pasted.len();
    let mut caret = None;
    for (k, (pasted_kind, pasted_runs)) in pasted.into_iter().enumerate() {
        let (mut runs, mut kind_here) = (pasted_runs, pasted_kind);
        if k == 0 {
            runs = join(&before, &runs);
            if !before.is_empty() {
                kind_here = kind;
            }
        }
        let at = len16(&runs);
        if k + 1 == count {
            runs = join(&runs, &after);
        }
        let id = if k == 0 { id.clone() } else { fresh_id(&document(&[], list), kind_here.id_prefix()) };
        let block = EdBlock { key: key(), block: Block::Text { id, kind: kind_here, runs }, touched: n };
        let drawn = block.key;
        if k == 0 {
            list[i] = block;
        } else {
            list.insert(i + k, block);
        }
        caret = Some((drawn, at));
    }
    caret
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: &str, text: &str) -> Block {
        Block::Text { id: id.into(), kind: TextKind::P, runs: vec![Run::plain(text)] }
    }

    fn doc(blocks: Vec<Block>) -> Doc {
        Doc { attrs: vec![], blocks }
    }

    fn ed(blocks: &[Block], touched: &[u64]) -> Vec<EdBlock> {
        blocks.iter().zip(touched).enumerate().map(|(k, (b, t))| EdBlock { key: k as u64 + 1, block: b.clone(), touched: *t }).collect()
    }

    fn texts(blocks: &[EdBlock]) -> Vec<String> {
        blocks.iter().map(|b| b.block.to_element().text()).collect()
    }

    #[test]
    fn an_arriving_version_changes_only_what_the_teacher_is_not_typing_in() {
        let base = doc(vec![p("a", "one"), p("b", "two"), p("c", "three")]);
        // The teacher is typing in b (touched 5, after the last confirmed save at 3).
        let local = ed(&[p("a", "one"), p("b", "two and more"), p("c", "three")], &[0, 5, 0]);
        // Elsewhere: a changed, c removed, d added after a.
        let incoming = doc(vec![p("a", "ONE"), p("d", "new"), p("b", "two"), ]);
        let mut key = 10;
        let got = adopt(&local, &base, &incoming, |b| b.touched > 3, &HashSet::new(), &mut key);
        assert_eq!(texts(&got.blocks), ["ONE", "new", "two and more"]);
        // b keeps its element (and caret); a and d are drawn anew.
        assert_eq!(got.blocks[2].key, 2);
        assert!(got.blocks[0].key > 10 && got.blocks[1].key > 10);
        assert!(got.offers.is_empty());
    }

    #[test]
    fn a_change_to_the_block_being_typed_in_is_offered_not_forced() {
        let base = doc(vec![p("a", "one"), p("b", "two")]);
        let local = ed(&[p("a", "one"), p("b", "two, typed")], &[0, 7]);
        let incoming = doc(vec![p("a", "one"), p("b", "two, theirs")]);
        let mut key = 10;
        let got = adopt(&local, &base, &incoming, |b| b.touched > 3, &HashSet::new(), &mut key);
        assert_eq!(texts(&got.blocks), ["one", "two, typed"]);
        assert_eq!(got.blocks[0].key, 1, "an unchanged block is left alone");
        assert_eq!(got.offers, vec![p("b", "two, theirs")]);
    }

    #[test]
    fn pasted_blocks_go_in_at_the_selection_and_take_the_text_around_it() {
        let bold = |t: &str| Run { text: t.into(), bold: true, italic: false };
        let mut list = ed(&[p("a", "Before SELECTED after"), p("z", "last")], &[0, 0]);
        let pasted = vec![(TextKind::H2, vec![Run::plain("one")]), (TextKind::P, vec![bold("two")]), (TextKind::P, vec![Run::plain("three")])];
        let mut next = 50;
        let caret = paste(&mut list, 0, (15, 7), pasted, 9, || { next += 1; next });
        assert_eq!(texts(&list), ["Before one", "two", "three after", "last"]);
        // Text before the selection keeps the block a paragraph, with its id;
        // new blocks get ids no block has.
        assert!(matches!(&list[0].block, Block::Text { id, kind: TextKind::P, .. } if id == "a"));
        assert_eq!(list.iter().map(|b| b.block.id()).collect::<Vec<_>>(), ["a", "p-t-1", "p-t-2", "z"]);
        assert_eq!(list[1].block, Block::Text { id: "p-t-1".into(), kind: TextKind::P, runs: vec![bold("two")] });
        assert!(list[..3].iter().all(|b| b.touched == 9) && list[3].touched == 0);
        // The caret ends where the paste did, before the text that was after it.
        assert_eq!(caret, Some((53, 5)));
        // At the very start of an empty block, the first pasted block's kind is kept.
        let mut list = ed(&[p("e", "")], &[0]);
        paste(&mut list, 0, (0, 0), vec![(TextKind::H1, vec![Run::plain("Title")])], 1, || 7);
        assert!(matches!(&list[0].block, Block::Text { kind: TextKind::H1, .. }));
    }

    #[test]
    fn new_and_removed_blocks_of_the_teacher_survive() {
        let base = doc(vec![p("a", "one"), p("b", "two")]);
        // The teacher added n after a and removed b; nothing saved yet.
        let local = ed(&[p("a", "one"), p("n", "mine")], &[0, 4]);
        let incoming = doc(vec![p("z", "theirs first"), p("a", "one"), p("b", "two")]);
        let mut key = 10;
        let removed = HashSet::from(["b".to_string()]);
        let got = adopt(&local, &base, &incoming, |b| b.touched > 3, &removed, &mut key);
        assert_eq!(texts(&got.blocks), ["theirs first", "one", "mine"]);
    }
}
