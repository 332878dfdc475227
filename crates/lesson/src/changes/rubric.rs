//! A rubric's changes, for the change list: added or removed whole, shared
//! with students or not, criteria added, removed or renamed (matched by
//! id), and each criterion's levels by their points.

use super::{match_ids, quote, word_diff, ChangeKind, Out};
use crate::{
    rubric::{Criterion, Rubric},
    tree::Element,
};

/// `holder`'s rubric from `old` to `new` (a question or a writing task,
/// named by `label`).
pub(super) fn rubric(label: &str, old: Option<&Element>, new: Option<&Element>, out: &mut Out) {
    match (old, new) {
        (None, Some(n)) => {
            let r = Rubric::from_element(n);
            let shown = if r.shared { ", shown to students" } else { "" };
            out.push(ChangeKind::Added, format!("{label}: added a rubric ({}, up to {} points{shown})", criteria(r.criteria.len()), r.max_points()));
        }
        (Some(_), None) => out.push(ChangeKind::Removed, format!("{label}: removed the rubric")),
        (Some(o), Some(n)) => edited(label, o, n, out),
        (None, None) => {}
    }
}

fn criteria(n: usize) -> String {
    format!("{n} criteri{}", if n == 1 { "on" } else { "a" })
}

fn edited(label: &str, old: &Element, new: &Element, out: &mut Out) {
    let (o, n) = (Rubric::from_element(old), Rubric::from_element(new));
    if o.shared != n.shared {
        let now = if n.shared { "now shown to students" } else { "no longer shown to students" };
        out.push(ChangeKind::Edited, format!("{label}: the rubric is {now}"));
    }
    let (oc, nc): (Vec<&Element>, Vec<&Element>) = (of(old), of(new));
    let m = match_ids(&oc, &nc, |_, _| true);
    for (j, c) in n.criteria.iter().enumerate() {
        match m.old_of_new[j] {
            None => out.push(ChangeKind::Added, format!("{label}: added rubric criterion “{}”", quote(&c.name))),
            Some(i) => criterion(label, &o.criteria[i], c, out),
        }
    }
    for (i, _) in m.removed(&oc) {
        out.push(ChangeKind::Removed, format!("{label}: removed rubric criterion “{}”", quote(&o.criteria[i].name)));
    }
}

fn of(r: &Element) -> Vec<&Element> {
    r.elements().filter(|c| c.name == "criterion").collect()
}

/// A criterion kept: its name, then its levels matched by points.
fn criterion(label: &str, old: &Criterion, new: &Criterion, out: &mut Out) {
    if old.name != new.name {
        out.push(ChangeKind::Edited, format!("{label}: rubric criterion “{}” → “{}”", quote(&old.name), quote(&new.name)));
    }
    let at = format!("{label}, rubric criterion “{}”", quote(&new.name));
    for l in &new.levels {
        match old.levels.iter().find(|o| o.points == l.points) {
            None => out.push(ChangeKind::Added, format!("{at}: added a level for {} points “{}”", l.points, quote(&l.text))),
            Some(o) if o.text != l.text => out.push(ChangeKind::Edited, format!("{at}, {} points: {}", l.points, word_diff(&o.text, &l.text))),
            Some(_) => {}
        }
    }
    for o in old.levels.iter().filter(|o| !new.levels.iter().any(|l| l.points == o.points)) {
        out.push(ChangeKind::Removed, format!("{at}: removed the level for {} points “{}”", o.points, quote(&o.text)));
    }
}
