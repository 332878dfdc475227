//! What changed between two versions of a lesson, in the terms of the lesson
//! itself: "Exercise 2 (Fill in the blanks), blank 3: answer “ran” → “run”"
//! rather than lines of XML. Blocks and their parts are matched by id (ids
//! are stable across edits, see `ids`); text edits are told as word-level
//! differences (the `similar` crate). Exercises are numbered as they appear:
//! in the new version for what is there, in the old one for what was removed
//! or moved.
//!
//! Server only; the browser receives the list already worded (`Change`).

mod matching;
mod rubric;
mod wording;

pub(super) use matching::{match_ids, moved, same, Matching};
use matching::same_inline;
use wording::*;

use super::{
    change::{Change, ChangeKind},
    schema::ExerciseKind,
    tree::Element,
};

/// Every change from `old` to `new`, in the order of the new lesson (a
/// removed block where it used to be).
pub fn changes(old: &Element, new: &Element) -> Vec<Change> {
    let mut out = Out::default();
    out.attr("The lesson", "title", old.attr("title"), new.attr("title"));
    out.attr("The lesson", "language", old.attr("lang"), new.attr("lang"));
    out.standards("The lesson", old.attr("standards"), new.attr("standards"));
    blocks(old, new, &mut out);
    if let Some(level) = super::reading::change(old, new) {
        out.block = None;
        out.push(ChangeKind::Edited, level);
    }
    out.list
}

/// The list being written, and the block its next lines are about.
#[derive(Default)]
struct Out {
    list: Vec<Change>,
    block: Option<String>,
}

impl Out {
    fn push(&mut self, kind: ChangeKind, text: String) {
        self.list.push(Change { kind, block: self.block.clone(), text });
    }

    /// An attribute told as "label: what “a” → “b”".
    fn attr(&mut self, label: &str, what: &str, old: Option<&str>, new: Option<&str>) {
        let old = old.map(str::trim).filter(|s| !s.is_empty());
        let new = new.map(str::trim).filter(|s| !s.is_empty());
        match (old, new) {
            (Some(a), Some(b)) if a != b => self.push(ChangeKind::Edited, format!("{label}: {what} “{}” → “{}”", quote(a), quote(b))),
            (None, Some(b)) => self.push(ChangeKind::Edited, format!("{label}: new {what} “{}”", quote(b))),
            (Some(a), None) => self.push(ChangeKind::Edited, format!("{label}: {what} “{}” removed", quote(a))),
            _ => {}
        }
    }

    /// Standards named or no longer named (`standards="…"`), code by code.
    fn standards(&mut self, label: &str, old: Option<&str>, new: Option<&str>) {
        let old = super::standards::codes(old.unwrap_or_default());
        let new = super::standards::codes(new.unwrap_or_default());
        let added: Vec<&str> = new.iter().filter(|c| !old.contains(c)).copied().collect();
        let removed: Vec<&str> = old.iter().filter(|c| !new.contains(c)).copied().collect();
        if !added.is_empty() {
            self.push(ChangeKind::Edited, format!("{label}: now names standard {}", added.join(", ")));
        }
        if !removed.is_empty() {
            self.push(ChangeKind::Edited, format!("{label}: no longer names standard {}", removed.join(", ")));
        }
    }

    /// A part of running text (a prompt, an option, the instructions…) that
    /// is there once or not at all.
    fn text_part(&mut self, label: &str, what: &str, old: Option<&Element>, new: Option<&Element>) {
        match (old, new) {
            (None, Some(n)) => self.push(ChangeKind::Added, format!("{label}: added {what} “{}”", quote(&n.text()))),
            (Some(o), None) => self.push(ChangeKind::Removed, format!("{label}: removed {what} “{}”", quote(&o.text()))),
            (Some(o), Some(n)) => self.text(&format!("{label}, {what}"), o, n),
            (None, None) => {}
        }
    }

    /// The text of two matched elements: the words that changed, or that only
    /// the emphasis did.
    fn text(&mut self, label: &str, old: &Element, new: &Element) {
        let (a, b) = (plain(old), plain(new));
        if a != b {
            self.push(ChangeKind::Edited, format!("{label}: {}", word_diff(&a, &b)));
        } else if !same_inline(old, new) {
            self.push(ChangeKind::Edited, format!("{label}: emphasis changed"));
        }
    }
}

fn blocks(old: &Element, new: &Element, out: &mut Out) {
    let olds: Vec<&Element> = old.elements().collect();
    let news: Vec<&Element> = new.elements().collect();
    let (old_no, new_no) = (exercise_numbers(&olds), exercise_numbers(&news));
    let m = match_ids(&olds, &news, |a, b| a.name == b.name || (is_heading(a) && is_heading(b)));
    let moved = moved(&m);
    let mut next_old = 0;
    for (j, n) in news.iter().enumerate() {
        let Some(i) = m.old_of_new[j] else {
            out.block = n.id().map(str::to_string);
            out.push(ChangeKind::Added, added_block(n, new_no[j]));
            continue;
        };
        // Blocks removed before this one are told here, where they were.
        while next_old < i {
            removed_block(olds[next_old], old_no[next_old], &m, next_old, out);
            next_old += 1;
        }
        next_old = next_old.max(i + 1);
        out.block = n.id().map(str::to_string);
        if moved.contains(&i) {
            let text = match m.old_of_new[j + 1..].iter().flatten().find(|k| !moved.contains(k)) {
                Some(&k) => format!("Moved {} above {}", short_label(olds[i], old_no[i]), short_label(olds[k], old_no[k])),
                None => format!("Moved {} to the end", short_label(olds[i], old_no[i])),
            };
            out.push(ChangeKind::Moved, text);
        }
        edited_block(olds[i], n, new_no[j], out);
    }
    for i in next_old..olds.len() {
        removed_block(olds[i], old_no[i], &m, i, out);
    }
}

fn removed_block(old: &Element, number: usize, m: &Matching, i: usize, out: &mut Out) {
    if !m.matched_old[i] {
        out.block = old.id().map(str::to_string);
        let text = match old.name.as_str() {
            "exercise" => format!("Removed exercise {number} ({}{})", kind_label(old), count(old)),
            _ => format!("Removed {}", label(old, number)),
        };
        out.push(ChangeKind::Removed, text);
    }
}

fn added_block(new: &Element, number: usize) -> String {
    match new.name.as_str() {
        "exercise" => format!("Added exercise {number} ({}{})", kind_label(new), count(new)),
        "h1" | "h2" | "h3" => format!("Added a heading “{}”", quote(&new.text())),
        "p" => format!("Added a paragraph “{}”", quote(&new.text())),
        "note" => format!("Added a teacher's note “{}”", quote(&new.text())),
        "writing-area" => "Added a writing area".into(),
        other => format!("Added a {other}"),
    }
}

fn edited_block(old: &Element, new: &Element, number: usize, out: &mut Out) {
    let before = out.list.len();
    let label = cap(&label(old, number));
    match new.name.as_str() {
        "h1" | "h2" | "h3" | "p" | "note" => {
            if old.name != new.name {
                out.push(ChangeKind::Edited, format!("{label} is now a level {} heading (was level {})", &new.name[1..], &old.name[1..]));
            }
            out.text(&label, old, new);
        }
        "writing-area" => writing_area(&label, old, new, out),
        "exercise" => exercise(old, new, number, out),
        _ => {}
    }
    if out.list.len() == before && !same(old, new) {
        out.push(ChangeKind::Edited, format!("{label}: changed"));
    }
}

fn writing_area(label: &str, old: &Element, new: &Element, out: &mut Out) {
    out.attr(label, "lines", Some(old.attr("lines").unwrap_or("5")), Some(new.attr("lines").unwrap_or("5")));
    out.attr(label, "placeholder", old.attr("placeholder"), new.attr("placeholder"));
}

fn exercise(old: &Element, new: &Element, number: usize, out: &mut Out) {
    let label = format!("Exercise {number} ({})", kind_label(new));
    if old.attr("type") != new.attr("type") {
        out.push(ChangeKind::Edited, format!("Exercise {number} is now {} (was {})", kind_label(new), kind_label(old)));
        return;
    }
    out.attr(&label, "title", old.attr("title"), new.attr("title"));
    out.standards(&label, old.attr("standards"), new.attr("standards"));
    out.text_part(&label, "instructions", child(old, "instructions"), child(new, "instructions"));
    match new.attr("type").and_then(ExerciseKind::from_name) {
        Some(ExerciseKind::FillBlanks) => fill_blanks(&label, old, new, out),
        Some(ExerciseKind::MultipleChoice) => questions(&label, old, new, true, out),
        Some(ExerciseKind::ShortAnswer) => questions(&label, old, new, false, out),
        Some(ExerciseKind::TrueFalse) => statements(&label, old, new, out),
        Some(ExerciseKind::Sequencing) => items(&label, old, new, out),
        Some(ExerciseKind::Writing) => {
            out.text_part(&label, "task", child(old, "prompt"), child(new, "prompt"));
            match (child(old, "writing-area"), child(new, "writing-area")) {
                (None, Some(_)) => out.push(ChangeKind::Added, format!("{label}: added a writing area")),
                (Some(_), None) => out.push(ChangeKind::Removed, format!("{label}: removed the writing area")),
                (Some(o), Some(n)) => writing_area(&format!("{label}, writing area"), o, n, out),
                (None, None) => {}
            }
            rubric::rubric(&label, child(old, "rubric"), child(new, "rubric"), out);
        }
        None => {}
    }
}

fn fill_blanks(label: &str, old: &Element, new: &Element, out: &mut Out) {
    let (os, ns) = (children(old, "p"), children(new, "p"));
    let m = match_ids(&os, &ns, |_, _| true);
    for (j, n) in ns.iter().enumerate() {
        match m.old_of_new[j] {
            None => out.push(ChangeKind::Added, format!("{label}: added sentence {} “{}”", j + 1, quote(&sentence(n)))),
            Some(i) => {
                let (a, b) = (sentence(os[i]), sentence(n));
                if a != b {
                    out.push(ChangeKind::Edited, format!("{label}, sentence {}: {}", j + 1, word_diff(&a, &b)));
                }
            }
        }
    }
    for (i, o) in m.removed(&os) {
        out.push(ChangeKind::Removed, format!("{label}: removed sentence {} “{}”", i + 1, quote(&sentence(o))));
    }
    let (ob, nb) = (descendants(old, "blank"), descendants(new, "blank"));
    let m = match_ids(&ob, &nb, |_, _| true);
    for (j, n) in nb.iter().enumerate() {
        let blank = format!("{label}, blank {}", j + 1);
        match m.old_of_new[j] {
            None => out.push(ChangeKind::Added, format!("{label}: added blank {} (answer “{}”)", j + 1, quote(n.attr("answer").unwrap_or_default()))),
            Some(i) => {
                let o = ob[i];
                out.attr(&blank, "answer", o.attr("answer"), n.attr("answer"));
                out.attr(&blank, "other accepted answers", o.attr("alts"), n.attr("alts"));
                out.attr(&blank, "hint", o.attr("hint"), n.attr("hint"));
                out.attr(&blank, "student's answer", o.attr("student-answer"), n.attr("student-answer"));
            }
        }
    }
    for (i, o) in m.removed(&ob) {
        out.push(ChangeKind::Removed, format!("{label}: removed blank {} (answer “{}”)", i + 1, quote(o.attr("answer").unwrap_or_default())));
    }
}

fn questions(label: &str, old: &Element, new: &Element, choices: bool, out: &mut Out) {
    let (oq, nq) = (children(old, "question"), children(new, "question"));
    let m = match_ids(&oq, &nq, |_, _| true);
    for (j, n) in nq.iter().enumerate() {
        let Some(i) = m.old_of_new[j] else {
            out.push(ChangeKind::Added, format!("{label}: added question {} “{}”", j + 1, quote(&prompt(n))));
            continue;
        };
        let o = oq[i];
        let q = format!("{label}, question {}", j + 1);
        out.text_part(&q, "prompt", child(o, "prompt"), child(n, "prompt"));
        if choices {
            options(&q, o, n, out);
        } else {
            out.text_part(&q, "model answer", child(o, "answer"), child(n, "answer"));
            rubric::rubric(&q, child(o, "rubric"), child(n, "rubric"), out);
        }
    }
    for (i, o) in m.removed(&oq) {
        out.push(ChangeKind::Removed, format!("{label}: removed question {} “{}”", i + 1, quote(&prompt(o))));
    }
    reordered(label, "questions", &m, out);
}

fn options(q: &str, old: &Element, new: &Element, out: &mut Out) {
    let several = |e: &Element| e.attr("multiple") == Some("true");
    if several(old) != several(new) {
        let now = if several(new) { "more than one option may now be correct" } else { "exactly one option is now correct" };
        out.push(ChangeKind::Edited, format!("{q}: {now}"));
    }
    let (oo, no) = (children(old, "option"), children(new, "option"));
    let m = match_ids(&oo, &no, |_, _| true);
    let correct = |e: &Element| e.attr("correct") == Some("true");
    for (j, n) in no.iter().enumerate() {
        match m.old_of_new[j] {
            None => {
                let mark = if correct(n) { " (correct)" } else { "" };
                out.push(ChangeKind::Added, format!("{q}: added the option “{}”{mark}", quote(&n.text())));
            }
            Some(i) => out.text(&format!("{q}, option “{}”", quote(&oo[i].text())), oo[i], n),
        }
    }
    for (_, o) in m.removed(&oo) {
        out.push(ChangeKind::Removed, format!("{q}: removed the option “{}”", quote(&o.text())));
    }
    let ids = |list: &[&Element]| list.iter().filter(|e| correct(e)).filter_map(|e| e.id()).map(str::to_string).collect::<Vec<_>>();
    if ids(&oo) != ids(&no) {
        let right: Vec<&&Element> = no.iter().filter(|e| correct(e)).collect();
        if !several(new) && right.len() == 1 {
            out.push(ChangeKind::Edited, format!("{q}: the correct option is now “{}”", quote(&right[0].text())));
        } else {
            for (j, n) in no.iter().enumerate() {
                if let Some(i) = m.old_of_new[j] {
                    match (correct(oo[i]), correct(n)) {
                        (false, true) => out.push(ChangeKind::Edited, format!("{q}: “{}” is now marked correct", quote(&n.text()))),
                        (true, false) => out.push(ChangeKind::Edited, format!("{q}: “{}” is no longer marked correct", quote(&n.text()))),
                        _ => {}
                    }
                }
            }
        }
    }
    reordered(q, "options", &m, out);
}

fn statements(label: &str, old: &Element, new: &Element, out: &mut Out) {
    let (os, ns) = (children(old, "statement"), children(new, "statement"));
    let m = match_ids(&os, &ns, |_, _| true);
    let answer = |e: &Element| e.attr("answer").unwrap_or_default().to_string();
    for (j, n) in ns.iter().enumerate() {
        let s = format!("{label}, statement {}", j + 1);
        match m.old_of_new[j] {
            None => out.push(ChangeKind::Added, format!("{label}: added statement {} “{}” ({})", j + 1, quote(&n.text()), answer(n))),
            Some(i) => {
                if answer(os[i]) != answer(n) {
                    out.push(ChangeKind::Edited, format!("{s}: {} → {}", answer(os[i]), answer(n)));
                }
                out.text(&s, os[i], n);
            }
        }
    }
    for (i, o) in m.removed(&os) {
        out.push(ChangeKind::Removed, format!("{label}: removed statement {} “{}”", i + 1, quote(&o.text())));
    }
    reordered(label, "statements", &m, out);
}

fn items(label: &str, old: &Element, new: &Element, out: &mut Out) {
    let (oi, ni) = (children(old, "item"), children(new, "item"));
    let m = match_ids(&oi, &ni, |_, _| true);
    for (j, n) in ni.iter().enumerate() {
        match m.old_of_new[j] {
            None => out.push(ChangeKind::Added, format!("{label}: added the item “{}”", quote(&n.text()))),
            Some(i) => out.text(&format!("{label}, item “{}”", quote(&oi[i].text())), oi[i], n),
        }
    }
    for (_, o) in m.removed(&oi) {
        out.push(ChangeKind::Removed, format!("{label}: removed the item “{}”", quote(&o.text())));
    }
    // The right order: the items sorted by position. Told when the items in
    // both versions stand in another order among themselves (adding or
    // removing one is told above).
    fn by_position(mut list: Vec<&Element>) -> Vec<&Element> {
        list.sort_by_key(|e| e.attr("position").and_then(|p| p.trim().parse::<i64>().ok()).unwrap_or(i64::MAX));
        list
    }
    let kept_old = by_position(oi.iter().enumerate().filter(|(i, _)| m.matched_old[*i]).map(|(_, e)| *e).collect());
    let kept_new = by_position(ni.iter().enumerate().filter(|(j, _)| m.old_of_new[*j].is_some()).map(|(_, e)| *e).collect());
    if kept_old.iter().map(|e| e.id()).ne(kept_new.iter().map(|e| e.id())) {
        let texts: Vec<String> = by_position(ni.clone()).iter().map(|e| format!("“{}”", quote(&e.text()))).collect();
        out.push(ChangeKind::Edited, format!("{label}: the right order is now {}", texts.join(", ")));
    }
    if !moved(&m).is_empty() {
        out.push(ChangeKind::Moved, format!("{label}: the items are shown in a new order"));
    }
}

/// A line when the parts that are in both versions stand in a new order.
fn reordered(label: &str, what: &str, m: &Matching, out: &mut Out) {
    if !moved(m).is_empty() {
        out.push(ChangeKind::Moved, format!("{label}: the {what} are in a new order"));
    }
}

#[cfg(test)]
mod tests;
