//! An exercise (or a writing area) changed the way a teacher changes it in
//! the editor: one step at a time on one of its parts — a prompt's words,
//! an option marked right, an item's place in the order, a blank made from
//! selected words, a rubric's level added — each step keeping the shape
//! the format asks for where it can (one right option unless several are
//! allowed, positions that run 1…n, instructions first, a rubric last).
//!
//! A part is named by its path: the indexes of elements (text nodes not
//! counted) from the exercise down. What a step cannot keep right by itself
//! (an empty option, a question with no right answer) is left to the
//! format's own checks, [`problems`], which the editor shows at the part.
//!
//! Plain data, shared by the browser (the editor) and tests; no DOM here.

use std::collections::HashSet;

use super::{
    blocks::{inline_of, runs_of, Doc, Run},
    schema::{self, ExerciseKind},
    tree::{Element, Node},
};

/// Where a part stands: element indexes from the exercise down.
pub type Path = Vec<usize>;

/// What a fill-in sentence holds, as its editable element reads: words
/// with marks, and blanks named by their ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Words(Run),
    Blank(String),
}

/// A part a teacher can add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Instructions,
    Question,
    Option,
    Statement,
    Item,
    Sentence,
    ModelAnswer,
    Rubric,
    Criterion,
    Level,
    WritingArea,
}

/// One change to a part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The words of a text part (instructions, prompt, option, statement,
    /// item, model answer, a rubric level's description).
    Words(Vec<Run>),
    /// A fill-in sentence's words and blanks.
    Sentence(Vec<Piece>),
    /// An attribute typed or picked: empty removes one that is not required.
    Attr(&'static str, String),
    /// An option marked right or not; in a question with one right answer,
    /// marking one unmarks the others.
    Correct(bool),
    /// A question allows several right answers or, again, only one (the
    /// first marked stays marked).
    Multiple(bool),
    /// An item's place in the right order (1-based); the item that had it
    /// takes the old place.
    Position(usize),
    /// A part added inside the one named.
    Add(Part),
    /// The part removed (a blank becomes its words again; items after a
    /// removed item move up one place).
    Remove,
    /// The words between two offsets of a sentence (UTF-16 units, a blank
    /// counting as its answer) become a blank.
    MakeBlank { start: usize, end: usize },
}

/// Ids no element of the lesson uses, given out one by one.
#[derive(Default)]
pub struct Ids(HashSet<String>, String);

impl Ids {
    pub fn of(doc: &Doc) -> Self {
        let mut used = HashSet::new();
        for b in &doc.blocks {
            collect_ids(&b.to_element(), &mut used);
        }
        Self(used, String::new())
    }

    /// These ids with `tag` in each (`prefix-tag-n`): the editor's, so that
    /// no other editor and not the server makes the same id.
    pub fn tagged(mut self, tag: &str) -> Self {
        self.1 = tag.to_string();
        self
    }

    pub fn make(&mut self, prefix: &str) -> String {
        let prefix = if self.1.is_empty() { prefix.to_string() } else { format!("{prefix}-{}", self.1) };
        let id = (1..).map(|n| format!("{prefix}-{n}")).find(|id| !self.0.contains(id)).unwrap_or_default();
        self.0.insert(id.clone());
        id
    }
}

fn collect_ids(e: &Element, out: &mut HashSet<String>) {
    if let Some(id) = e.id() {
        out.insert(id.to_string());
    }
    e.elements().for_each(|c| collect_ids(c, out));
}

/// The part at `path`.
pub fn at<'a>(e: &'a Element, path: &[usize]) -> Option<&'a Element> {
    match path.split_first() {
        None => Some(e),
        Some((i, rest)) => at(e.elements().nth(*i)?, rest),
    }
}

fn at_mut<'a>(e: &'a mut Element, path: &[usize]) -> Option<&'a mut Element> {
    match path.split_first() {
        None => Some(e),
        Some((i, rest)) => {
            let child = e.children.iter_mut().filter_map(|n| match n {
                Node::Element(c) => Some(c),
                Node::Text(_) => None,
            });
            at_mut(child.into_iter().nth(*i)?, rest)
        }
    }
}

/// The index in `children` of the `i`th element.
fn node_index(e: &Element, i: usize) -> Option<usize> {
    e.children.iter().enumerate().filter(|(_, n)| matches!(n, Node::Element(_))).nth(i).map(|(k, _)| k)
}

fn remove_attr(e: &mut Element, name: &str) {
    e.attrs.retain(|(k, _)| k != name);
}

fn element(name: &str, id: Option<String>) -> Element {
    let mut e = Element::new(name);
    if let Some(id) = id {
        e.set_attr("id", id);
    }
    e
}

/// A new, empty part (with the parts it cannot be without).
fn make(part: Part, ids: &mut Ids) -> Element {
    match part {
        Part::Instructions => element("instructions", None),
        Part::Question => {
            let mut q = element("question", Some(ids.make("q")));
            q.children.push(Node::Element(element("prompt", None)));
            q
        }
        Part::Option => element("option", Some(ids.make("opt"))),
        Part::Statement => {
            let mut s = element("statement", Some(ids.make("st")));
            s.set_attr("answer", "true");
            s
        }
        Part::Item => element("item", Some(ids.make("it"))),
        Part::Sentence => element("p", Some(ids.make("p"))),
        Part::ModelAnswer => element("answer", None),
        Part::Rubric => {
            let mut r = element("rubric", Some(ids.make("rb")));
            r.children.push(Node::Element(make(Part::Criterion, ids)));
            r
        }
        Part::Criterion => {
            let mut c = element("criterion", Some(ids.make("cr")));
            c.set_attr("name", "");
            for points in ["2", "1", "0"] {
                let mut l = element("level", None);
                l.set_attr("points", points);
                c.children.push(Node::Element(l));
            }
            c
        }
        Part::Level => element("level", None),
        Part::WritingArea => {
            let mut w = element("writing-area", Some(ids.make("wa")));
            w.set_attr("lines", "8");
            w
        }
    }
}

/// A new exercise of `kind`, with the parts it is made of, empty.
pub fn new_exercise(kind: ExerciseKind, ids: &mut Ids) -> Element {
    let mut e = element("exercise", Some(ids.make("ex")));
    e.set_attr("type", kind.name());
    let parts: Vec<Element> = match kind {
        ExerciseKind::FillBlanks => vec![make(Part::Sentence, ids)],
        ExerciseKind::MultipleChoice => {
            let mut q = make(Part::Question, ids);
            for _ in 0..2 {
                q.children.push(Node::Element(make(Part::Option, ids)));
            }
            vec![q]
        }
        ExerciseKind::TrueFalse => vec![make(Part::Statement, ids)],
        ExerciseKind::Sequencing => (1..=2)
            .map(|n| {
                let mut it = make(Part::Item, ids);
                it.set_attr("position", n.to_string());
                it
            })
            .collect(),
        ExerciseKind::ShortAnswer => vec![make(Part::Question, ids)],
        ExerciseKind::Writing => vec![element("prompt", None), make(Part::WritingArea, ids)],
    };
    e.children = parts.into_iter().map(Node::Element).collect();
    e
}

/// `step` on the part at `path` of `block` (an exercise or a writing
/// area). The answer is the part the teacher's focus goes to next (a part
/// added, or the one changed); an error says why the step cannot be taken.
pub fn apply(block: &mut Element, path: &[usize], step: Step, ids: &mut Ids) -> Result<Path, String> {
    let here = at_mut(block, path).ok_or("That part is no longer there.")?;
    match step {
        Step::Words(runs) => here.children = inline_of(&runs),
        Step::Sentence(pieces) => here.children = sentence_nodes(here, pieces),
        Step::Attr(name, value) => {
            let required = schema::attributes(&here.name).1.contains(&name);
            if value.trim().is_empty() && !required {
                remove_attr(here, name);
            } else {
                here.set_attr(name, value);
            }
        }
        Step::Correct(on) => {
            if on {
                here.set_attr("correct", "true");
            } else {
                remove_attr(here, "correct");
            }
            let (parent_path, me) = path.split_at(path.len().saturating_sub(1));
            let question = at_mut(block, parent_path).ok_or("That question is no longer there.")?;
            if on && question.attr("multiple") != Some("true") {
                let mut k = 0;
                for n in &mut question.children {
                    if let Node::Element(o) = n {
                        if o.name == "option" && Some(&k) != me.first() {
                            remove_attr(o, "correct");
                        }
                        k += 1;
                    }
                }
            }
        }
        Step::Multiple(on) => {
            if on {
                here.set_attr("multiple", "true");
            } else {
                remove_attr(here, "multiple");
                let mut seen = false;
                for n in &mut here.children {
                    if let Node::Element(o) = n {
                        if o.attr("correct") == Some("true") {
                            if seen {
                                remove_attr(o, "correct");
                            }
                            seen = true;
                        }
                    }
                }
            }
        }
        Step::Position(to) => {
            let old = here.attr("position").unwrap_or_default().to_string();
            here.set_attr("position", to.to_string());
            let (parent_path, me) = path.split_at(path.len().saturating_sub(1));
            let parent = at_mut(block, parent_path).ok_or("That exercise is no longer there.")?;
            let mut k = 0;
            for n in &mut parent.children {
                if let Node::Element(it) = n {
                    if it.name == "item" && Some(&k) != me.first() && it.attr("position") == Some(to.to_string().as_str()) {
                        it.set_attr("position", old.clone());
                    }
                    k += 1;
                }
            }
        }
        Step::Add(part) => return add(block, path, part, ids),
        Step::Remove => return remove(block, path),
        Step::MakeBlank { start, end } => {
            let id = ids.make("bl");
            make_blank(here, start, end, id)?;
        }
    }
    Ok(path.to_vec())
}

/// Where a new part goes among its parent's: instructions first, a model
/// answer after the prompt, a writing area before a rubric, the rest last.
fn add(block: &mut Element, path: &[usize], part: Part, ids: &mut Ids) -> Result<Path, String> {
    let parent = at_mut(block, path).ok_or("That part is no longer there.")?;
    let mut new = make(part, ids);
    let names: Vec<String> = parent.elements().map(|e| e.name.clone()).collect();
    let has = |name: &str| names.iter().any(|n| n == name);
    let refuse = |what: &str| Err(format!("This already has {what}."));
    let at = match part {
        Part::Instructions if has("instructions") => return refuse("instructions"),
        Part::Instructions => 0,
        Part::ModelAnswer if has("answer") => return refuse("a model answer"),
        Part::ModelAnswer => names.iter().position(|n| n == "prompt").map_or(0, |i| i + 1),
        Part::Rubric if has("rubric") => return refuse("a rubric"),
        Part::WritingArea if has("writing-area") => return refuse("a writing area"),
        Part::WritingArea => names.iter().position(|n| n == "rubric").unwrap_or(names.len()),
        Part::Item => {
            let n = names.iter().filter(|n| *n == "item").count();
            new.set_attr("position", (n + 1).to_string());
            names.len()
        }
        Part::Level => {
            let used: HashSet<u32> = parent.elements().filter_map(|l| l.attr("points")?.parse().ok()).collect();
            let points = (0..=100).find(|p| !used.contains(p)).unwrap_or(0);
            new.set_attr("points", points.to_string());
            names.len()
        }
        _ => names.len(),
    };
    let node_at = node_index(parent, at).unwrap_or(parent.children.len());
    parent.children.insert(node_at, Node::Element(new));
    let mut out = path.to_vec();
    out.push(at);
    Ok(out)
}

fn remove(block: &mut Element, path: &[usize]) -> Result<Path, String> {
    let (parent_path, me) = path.split_at(path.len().saturating_sub(1));
    let &[i] = me else { return Err("The exercise itself is removed with its block's ✕.".into()) };
    let parent = at_mut(block, parent_path).ok_or("That part is no longer there.")?;
    let k = node_index(parent, i).ok_or("That part is no longer there.")?;
    let Node::Element(gone) = parent.children.remove(k) else { unreachable!("node_index names an element") };
    match gone.name.as_str() {
        // A blank goes back to being the words it was.
        "blank" => {
            parent.children.insert(k, Node::Text(gone.attr("answer").unwrap_or_default().to_string()));
            let pieces = runs_with_blanks(parent);
            parent.children = sentence_nodes(parent, pieces);
        }
        "item" => {
            let gone_at: usize = gone.attr("position").and_then(|p| p.parse().ok()).unwrap_or(usize::MAX);
            for n in &mut parent.children {
                if let Node::Element(it) = n {
                    if let Some(p) = it.attr("position").and_then(|p| p.parse::<usize>().ok()).filter(|p| *p > gone_at) {
                        it.set_attr("position", (p - 1).to_string());
                    }
                }
            }
        }
        _ => {}
    }
    let left = parent.elements().count();
    let mut out = parent_path.to_vec();
    if left > 0 && gone.name != "blank" {
        out.push(i.min(left - 1));
    }
    Ok(out)
}

/// A sentence's content as pieces: its words (with marks) and its blanks.
pub fn runs_with_blanks(p: &Element) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut stretch = Element::new("p");
    for n in &p.children {
        match n {
            Node::Element(b) if b.name == "blank" => {
                out.extend(runs_of(&stretch).into_iter().map(Piece::Words));
                stretch.children.clear();
                out.push(Piece::Blank(b.id().unwrap_or_default().to_string()));
            }
            other => stretch.children.push(other.clone()),
        }
    }
    out.extend(runs_of(&stretch).into_iter().map(Piece::Words));
    out
}

/// The content of the sentence `p` made of `pieces`: its words as inline
/// content, and each blank named that `p` holds (with what it holds); a
/// blank `p` does not hold is left out.
fn sentence_nodes(p: &Element, pieces: Vec<Piece>) -> Vec<Node> {
    let mut children = Vec::new();
    let mut words = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Words(r) => words.push(r),
            Piece::Blank(id) => {
                if let Some(b) = p.elements().find(|b| b.name == "blank" && b.id() == Some(id.as_str())) {
                    children.extend(inline_of(&std::mem::take(&mut words)));
                    children.push(Node::Element(b.clone()));
                }
            }
        }
    }
    children.extend(inline_of(&words));
    children
}

/// How long a piece of a sentence is as the editor shows it (UTF-16
/// units): its words, or a blank as its answer.
fn shown_len16(piece: &Piece, p: &Element) -> usize {
    match piece {
        Piece::Words(r) => r.text.encode_utf16().count(),
        Piece::Blank(id) => blank_answer(p, id).encode_utf16().count(),
    }
}

/// The answer of the blank `id` in the sentence `p` ("" when it has none).
pub fn blank_answer<'a>(p: &'a Element, id: &str) -> &'a str {
    p.elements().find(|b| b.name == "blank" && b.id() == Some(id)).and_then(|b| b.attr("answer")).unwrap_or_default()
}

/// The words `start..end` of the sentence `p` become a blank whose answer
/// they are. The words must lie outside any blank; spaces at their edges
/// stay words.
fn make_blank(p: &mut Element, start: usize, end: usize, id: String) -> Result<(), String> {
    let (start, end) = (start.min(end), start.max(end));
    let pieces = runs_with_blanks(p);
    let mut out = Vec::new();
    let mut made = false;
    let mut pos = 0;
    for piece in pieces {
        let len = shown_len16(&piece, p);
        let (from, to) = (pos, pos + len);
        pos = to;
        match piece {
            Piece::Words(run) if !made && start >= from && end <= to && end > start => {
                let units: Vec<u16> = run.text.encode_utf16().collect();
                let text = |a: usize, b: usize| String::from_utf16_lossy(&units[a..b]);
                let (mut a, mut b) = (start - from, end - from);
                let chosen = text(a, b);
                a += chosen.encode_utf16().count() - chosen.trim_start().encode_utf16().count();
                b -= chosen.encode_utf16().count() - chosen.trim_end().encode_utf16().count();
                if a >= b {
                    return Err("Select the word or words that make the blank.".into());
                }
                let answer = text(a, b);
                out.push(Piece::Words(Run { text: text(0, a), ..run.clone() }));
                out.push(Piece::Blank(id.clone()));
                out.push(Piece::Words(Run { text: text(b, units.len()), ..run }));
                let mut blank = element("blank", Some(id.clone()));
                blank.set_attr("answer", answer);
                p.children.push(Node::Element(blank));
                made = true;
            }
            other => out.push(other),
        }
    }
    if !made {
        return Err(if start == end {
            "Select the word or words that make the blank.".into()
        } else {
            "Select words within one stretch of the sentence, not across a blank or a change of bold or italic.".into()
        });
    }
    let pieces: Vec<Piece> = out.into_iter().filter(|p| !matches!(p, Piece::Words(r) if r.text.is_empty())).collect();
    p.children = sentence_nodes(p, pieces);
    Ok(())
}

/// The format's problems with `block`, each at the part it is about, said
/// for a teacher filling in fields rather than writing XML.
pub fn problems(block: &Element) -> Vec<(Path, String)> {
    // Each element numbered (its "line"), so that each problem, which names
    // the line of the element it is about, finds its part. Checked as it
    // stands: no parser, which the browser's bundle then leaves out.
    fn number(e: &mut Element, next: &mut u32) {
        *next += 1;
        (e.line, e.column) = (*next, 1);
        for c in &mut e.children {
            if let Node::Element(c) = c {
                number(c, next);
            }
        }
    }
    let mut numbered = block.clone();
    number(&mut numbered, &mut 0);
    let mut root = Element::new("lesson");
    root.children = vec![Node::Element(numbered)];
    let Some(numbered) = root.elements().next() else { return Vec::new() };
    super::validate(&root)
        .into_iter()
        .map(|e| (path_of(numbered, e.line, e.column).unwrap_or_default(), for_teachers(&e.message)))
        .collect()
}

fn path_of(e: &Element, line: u32, column: u32) -> Option<Path> {
    if e.line == line && e.column == column {
        return Some(Vec::new());
    }
    e.elements().enumerate().find_map(|(i, c)| {
        let mut p = path_of(c, line, column)?;
        p.insert(0, i);
        Some(p)
    })
}

/// The format's messages, which speak of tags, said for the editor's fields.
fn for_teachers(message: &str) -> String {
    let said = [
        ("mark at least one option correct", "Mark the right answer."),
        ("exactly one option must have correct=\"true\" (found 0)", "Mark the right answer."),
        ("exactly one option must have", "Mark one right answer, or allow several."),
        ("a fill-blanks exercise needs at least one", "Select a word in a sentence and press “Make a blank”."),
        ("a question needs at least two", "A question needs at least two options."),
        ("a sequencing exercise needs at least two", "Add at least two items to put in order."),
        ("a multiple-choice exercise needs at least one", "Add a question."),
        ("a short-answer exercise needs at least one", "Add a question."),
        ("a true-false exercise needs at least one", "Add a statement."),
        ("the criterion's name is empty", "Name what this criterion judges."),
        ("the answer is empty", "Write the blank's answer."),
        ("a rubric needs", "A rubric needs one to eight criteria."),
        ("a criterion needs", "A criterion needs two to six levels."),
        ("this level is empty", "Say what an answer at this level does."),
        ("points=", "Points are a whole number from 0 to 100."),
        ("lines=", "Lines are a whole number from 1 to 50."),
    ];
    if let Some((_, s)) = said.iter().find(|(start, _)| message.starts_with(start)) {
        return (*s).to_string();
    }
    if message.starts_with("position ") && message.contains(" is already used") {
        return "Another item already has this place: give each item its own.".into();
    }
    if message.contains("points is already a level") {
        return "Another level of this criterion has these points: give each level its own.".into();
    }
    if let Some(what) = message.strip_prefix("this ").and_then(|m| m.strip_suffix(" is empty. Write its text between the tags.")) {
        let mut s = format!("Write the {what}.");
        s[..1].make_ascii_uppercase();
        return s;
    }
    // Anything else as the format says it, without its angle brackets.
    let plain: String = message.replace(['<', '>'], "").replace("/>", "");
    let mut plain = plain.trim().to_string();
    if let Some(first) = plain.get(..1) {
        let upper = first.to_ascii_uppercase();
        plain.replace_range(..1, &upper);
    }
    plain
}

#[cfg(test)]
mod tests;
