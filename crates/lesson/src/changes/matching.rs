//! Which block or part of the old version is which of the new: matched by
//! id, with what moved and what is the same.

use std::collections::{HashMap, HashSet};

use similar::{capture_diff_slices, Algorithm, DiffTag};

use crate::{
    schema::holds_blocks,
    tree::{Element, Node},
};

/// Which new element stands for which old one: the same id, and (for
/// blocks) the same kind of element. Elements without an id are never
/// matched: they are new.
pub(crate) struct Matching {
    pub(crate) old_of_new: Vec<Option<usize>>,
    pub(crate) matched_old: Vec<bool>,
}

impl Matching {
    /// The old elements that have no match, with their places.
    pub(crate) fn removed<'a>(&self, olds: &[&'a Element]) -> Vec<(usize, &'a Element)> {
        olds.iter().enumerate().filter(|(i, _)| !self.matched_old[*i]).map(|(i, e)| (i, *e)).collect()
    }
}

pub(crate) fn match_ids(olds: &[&Element], news: &[&Element], alike: fn(&Element, &Element) -> bool) -> Matching {
    let by_id: HashMap<&str, usize> = olds.iter().enumerate().filter_map(|(i, e)| e.id().map(|id| (id, i))).collect();
    let mut matched_old = vec![false; olds.len()];
    let old_of_new = news
        .iter()
        .map(|n| {
            let i = *by_id.get(n.id()?)?;
            if matched_old[i] || !alike(olds[i], n) {
                return None;
            }
            matched_old[i] = true;
            Some(i)
        })
        .collect();
    Matching { old_of_new, matched_old }
}

/// The old indices of matched elements that changed place: those outside a
/// longest run kept in order.
pub(crate) fn moved(m: &Matching) -> HashSet<usize> {
    let before: Vec<usize> = (0..m.matched_old.len()).filter(|&i| m.matched_old[i]).collect();
    let after: Vec<usize> = m.old_of_new.iter().flatten().copied().collect();
    capture_diff_slices(Algorithm::Myers, &before, &after)
        .iter()
        .filter(|op| matches!(op.tag(), DiffTag::Insert | DiffTag::Replace))
        .flat_map(|op| after[op.new_range()].iter().copied())
        .collect()
}

/// Whether two elements hold the same text with the same emphasis (their own
/// attributes aside: those are told on their own).
pub(super) fn same_inline(a: &Element, b: &Element) -> bool {
    let (x, y) = (layout(a), layout(b));
    x.len() == y.len()
        && x.iter().zip(&y).all(|pair| match pair {
            (Node::Text(s), Node::Text(t)) => s == t,
            (Node::Element(e), Node::Element(f)) => same(e, f),
            _ => false,
        })
}

/// An element's children, without the spaces that only lay out blocks.
pub(super) fn layout(e: &Element) -> Vec<&Node> {
    let blocks = holds_blocks(&e.name);
    e.children.iter().filter(|c| !(blocks && matches!(c, Node::Text(t) if t.trim().is_empty()))).collect()
}

/// Whether two elements are the same but for where they stood in the source
/// and the spaces between blocks.
pub(crate) fn same(a: &Element, b: &Element) -> bool {
    a.name == b.name
        && a.attrs.len() == b.attrs.len()
        && a.attrs.iter().all(|(k, v)| b.attr(k) == Some(v.as_str()))
        && same_inline(a, b)
}
