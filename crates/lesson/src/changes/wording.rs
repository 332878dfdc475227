//! How a change is worded for the teacher: labels of blocks and parts,
//! their text cut to a quote, and word-level differences (`similar`).

use std::{
    ops::Range,
    time::{Duration, Instant},
};

use similar::{capture_diff_slices_deadline, Algorithm, DiffTag};

use crate::{
    schema::ExerciseKind,
    tree::{Element, Node},
};

/// The number of each exercise among the blocks (0 for other blocks).
pub(super) fn exercise_numbers(blocks: &[&Element]) -> Vec<usize> {
    let mut n = 0;
    blocks
        .iter()
        .map(|b| {
            if b.name == "exercise" {
                n += 1;
                n
            } else {
                0
            }
        })
        .collect()
}

pub(super) fn is_heading(e: &Element) -> bool {
    matches!(e.name.as_str(), "h1" | "h2" | "h3")
}

/// A block as a sentence names it ("exercise 2 (Fill in the blanks)", "the
/// paragraph “Most verbs …”").
pub(super) fn label(b: &Element, number: usize) -> String {
    match b.name.as_str() {
        "exercise" => format!("exercise {number} ({})", kind_label(b)),
        "h1" | "h2" | "h3" => format!("the heading “{}”", quote(&b.text())),
        "p" => format!("the paragraph “{}”", quote(&b.text())),
        "note" => format!("the teacher's note “{}”", quote(&b.text())),
        "writing-area" => "the writing area".into(),
        other => format!("the {other}"),
    }
}

/// A block as a move names it: exercises by number alone.
pub(super) fn short_label(b: &Element, number: usize) -> String {
    match b.name.as_str() {
        "exercise" => format!("exercise {number}"),
        _ => label(b, number),
    }
}

pub(super) fn kind_label(e: &Element) -> String {
    let t = e.attr("type").unwrap_or_default();
    ExerciseKind::from_name(t).map(|k| k.label().to_string()).unwrap_or_else(|| t.to_string())
}

/// ", 3 questions" for an exercise (nothing for a writing task).
pub(super) fn count(e: &Element) -> String {
    let (n, one) = match e.attr("type").and_then(ExerciseKind::from_name) {
        Some(ExerciseKind::FillBlanks) => (descendants(e, "blank").len(), "blank"),
        Some(ExerciseKind::MultipleChoice | ExerciseKind::ShortAnswer) => (children(e, "question").len(), "question"),
        Some(ExerciseKind::TrueFalse) => (children(e, "statement").len(), "statement"),
        Some(ExerciseKind::Sequencing) => (children(e, "item").len(), "item"),
        _ => return String::new(),
    };
    format!(", {n} {one}{}", if n == 1 { "" } else { "s" })
}

pub(super) fn child<'a>(e: &'a Element, name: &str) -> Option<&'a Element> {
    e.elements().find(|c| c.name == name)
}

pub(super) fn children<'a>(e: &'a Element, name: &str) -> Vec<&'a Element> {
    e.elements().filter(|c| c.name == name).collect()
}

pub(super) fn descendants<'a>(e: &'a Element, name: &str) -> Vec<&'a Element> {
    fn walk<'a>(e: &'a Element, name: &str, out: &mut Vec<&'a Element>) {
        for c in e.elements() {
            if c.name == name {
                out.push(c);
            }
            walk(c, name, out);
        }
    }
    let mut out = Vec::new();
    walk(e, name, &mut out);
    out
}

pub(super) fn prompt(question: &Element) -> String {
    child(question, "prompt").map(|p| p.text()).unwrap_or_default()
}

/// A fill-in sentence as a student sees it, each blank as "___".
pub(super) fn sentence(p: &Element) -> String {
    fn walk(e: &Element, out: &mut String) {
        for c in &e.children {
            match c {
                Node::Text(t) => out.push_str(t),
                Node::Element(b) if b.name == "blank" => out.push_str(" ___ "),
                Node::Element(x) => walk(x, out),
            }
        }
    }
    let mut out = String::new();
    walk(p, &mut out);
    squash(&out)
}

/// An element's words, with markup and extra spaces removed.
pub(super) fn plain(e: &Element) -> String {
    squash(&e.text())
}

pub(super) fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The start of a text, short enough to name it in a line: about 40
/// characters, cut at a word, with "…" when there is more.
pub(super) fn quote(text: &str) -> String {
    const ROOM: usize = 40;
    let mut out = String::new();
    let mut len = 0;
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if len > 0 && len + 1 + w > ROOM {
            out.push_str(" …");
            return out;
        }
        if len == 0 && w > ROOM {
            out.extend(word.chars().take(ROOM));
            out.push('…');
            return out;
        }
        if len > 0 {
            out.push(' ');
            len += 1;
        }
        out.push_str(word);
        len += w;
    }
    out
}

pub(super) fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Longest a word diff may take; past it `similar` gives a coarser answer.
pub(super) const DIFF_DEADLINE: Duration = Duration::from_millis(20);
/// Most word changes told in one line.
pub(super) const MAX_HUNKS: usize = 3;

/// The words that changed from `old` to `new`: “pattern” → “rule”; added
/// “very”; removed “quite”. Words are compared whole (spaces between them
/// are not words, so they never pair up changes oddly).
pub(super) fn word_diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.split_whitespace().collect(), new.split_whitespace().collect());
    let deadline = Instant::now() + DIFF_DEADLINE;
    let hunks: Vec<(Range<usize>, Range<usize>)> = capture_diff_slices_deadline(Algorithm::Myers, &a, &b, Some(deadline))
        .iter()
        .filter(|op| op.tag() != DiffTag::Equal)
        .map(|op| (op.old_range(), op.new_range()))
        .collect();
    let said: Vec<String> = hunks
        .iter()
        .take(MAX_HUNKS)
        .map(|(o, n)| match (a[o.clone()].join(" "), b[n.clone()].join(" ")) {
            (x, y) if x.is_empty() => format!("added “{}”", quote(&y)),
            (x, y) if y.is_empty() => format!("removed “{}”", quote(&x)),
            (x, y) => format!("“{}” → “{}”", quote(&x), quote(&y)),
        })
        .collect();
    let mut line = said.join("; ");
    if hunks.len() > MAX_HUNKS {
        let more = hunks.len() - MAX_HUNKS;
        line.push_str(&format!("; and {more} more change{}", if more == 1 { "" } else { "s" }));
    }
    line
}
