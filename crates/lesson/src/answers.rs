//! What a student answers in a lesson, and how it is marked: the answer key
//! read from the document (`items`), one item's answer marked right or wrong
//! (`Item::mark`), and the lesson as a student (and the tutor) may read it,
//! with every key and teacher note taken out (`for_students`).
//!
//! An item is the smallest thing answered on its own: a blank, a multiple
//! choice question, a true/false statement, a whole sequence (its item ids in
//! the order given), a short-answer question or a writing area. Its id is the
//! element's id; its answer is one string (option ids or item ids joined by
//! commas where there are several).

use std::collections::HashMap;

use super::{Element, ExerciseKind, Node};

/// What a student answered, by item id.
pub type Answers = HashMap<String, String>;

/// One answerable item and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub id: String,
    pub key: Key,
}

/// How an item is marked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// The answer and the other accepted answers; case and surrounding
    /// spaces do not matter.
    Blank { answer: String, alts: Vec<String>, hint: Option<String> },
    /// The ids of the right options (one, unless the question is `multiple`).
    Choice { right: Vec<String> },
    TrueFalse { answer: bool },
    /// The item ids in the right order, and in the order the sheet first
    /// shows them (the lesson's).
    Sequence { order: Vec<String>, shown: Vec<String> },
    /// A short answer or a piece of writing: left for the teacher.
    Open,
}

impl Item {
    /// Whether `value` is right; `None` for items the teacher marks
    /// (short answers and writing) and for items left empty.
    pub fn mark(&self, value: &str) -> Option<bool> {
        let value = value.trim();
        if value.is_empty() || self.key == Key::Open {
            return None;
        }
        Some(match &self.key {
            Key::Blank { answer, alts, .. } => std::iter::once(answer).chain(alts).any(|a| same_words(a, value)),
            Key::Choice { right } => {
                let mut chosen = list(value);
                chosen.sort();
                let mut right = right.clone();
                right.sort();
                chosen == right
            }
            Key::TrueFalse { answer } => value == if *answer { "true" } else { "false" },
            Key::Sequence { order, .. } => list(value) == *order,
            Key::Open => return None,
        })
    }

    /// Whether `value` is only what the sheet showed before the student did
    /// anything: a sequence in the order it is first shown. Such a value is
    /// not an answer (the student has not touched it).
    pub fn untouched(&self, value: &str) -> bool {
        matches!(&self.key, Key::Sequence { shown, .. } if list(value) == *shown)
    }

    /// The right answer in a few words, for the teacher's side only (the
    /// assistant told of a wrong answer): a blank's answer and the others
    /// it accepts, the right option ids, true or false, the item ids in
    /// order; `None` for items the teacher marks.
    /// What the item is, in a word: "blank", "question", "statement",
    /// "sequence", or "item" (an open one).
    pub fn kind_word(&self) -> &'static str {
        match self.key {
            Key::Blank { .. } => "blank",
            Key::Choice { .. } => "question",
            Key::TrueFalse { .. } => "statement",
            Key::Sequence { .. } => "sequence",
            Key::Open => "item",
        }
    }

    pub fn key_said(&self) -> Option<String> {
        Some(match &self.key {
            Key::Blank { answer, alts, .. } if alts.is_empty() => answer.clone(),
            Key::Blank { answer, alts, .. } => format!("{answer} (also accepted: {})", alts.join(", ")),
            Key::Choice { right } => format!("option {}", right.join(" and ")),
            Key::TrueFalse { answer } => answer.to_string(),
            Key::Sequence { order, .. } => format!("the order {}", order.join(", ")),
            Key::Open => return None,
        })
    }

    /// Whether the item is marked automatically.
    pub fn graded(&self) -> bool {
        self.key != Key::Open
    }
}

/// Ids joined by commas, split again (empty parts dropped).
pub fn list(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// Equal but for case and the spaces around and between words.
fn same_words(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    norm(a) == norm(b)
}

/// Every answerable item of a lesson, in document order.
pub fn items(root: &Element) -> Vec<Item> {
    let mut out = Vec::new();
    for block in root.elements() {
        match block.name.as_str() {
            "writing-area" => push_open(&mut out, block),
            "exercise" => exercise_items(block, &mut out),
            _ => {}
        }
    }
    out
}

fn push_open(out: &mut Vec<Item>, e: &Element) {
    if let Some(id) = e.id() {
        out.push(Item { id: id.into(), key: Key::Open });
    }
}

fn exercise_items(ex: &Element, out: &mut Vec<Item>) {
    let kind = ex.attr("type").and_then(ExerciseKind::from_name);
    match kind {
        Some(ExerciseKind::FillBlanks) => {
            for p in ex.elements() {
                blanks(p, out);
            }
        }
        Some(ExerciseKind::MultipleChoice) => {
            for q in ex.elements().filter(|e| e.name == "question") {
                let right = q.elements().filter(|o| o.name == "option" && o.attr("correct") == Some("true")).filter_map(|o| o.id()).map(String::from).collect();
                if let Some(id) = q.id() {
                    out.push(Item { id: id.into(), key: Key::Choice { right } });
                }
            }
        }
        Some(ExerciseKind::TrueFalse) => {
            for s in ex.elements().filter(|e| e.name == "statement") {
                if let Some(id) = s.id() {
                    out.push(Item { id: id.into(), key: Key::TrueFalse { answer: s.attr("answer") == Some("true") } });
                }
            }
        }
        Some(ExerciseKind::Sequencing) => {
            let mut placed: Vec<(u32, String)> = ex
                .elements()
                .filter(|e| e.name == "item")
                .filter_map(|i| Some((i.attr("position")?.trim().parse().ok()?, i.id()?.to_string())))
                .collect();
            placed.sort();
            let shown = ex.elements().filter(|e| e.name == "item").filter_map(|i| i.id().map(String::from)).collect();
            if let Some(id) = ex.id() {
                out.push(Item { id: id.into(), key: Key::Sequence { order: placed.into_iter().map(|p| p.1).collect(), shown } });
            }
        }
        Some(ExerciseKind::ShortAnswer) => ex.elements().filter(|e| e.name == "question").for_each(|q| push_open(out, q)),
        Some(ExerciseKind::Writing) => ex.elements().filter(|e| e.name == "writing-area").for_each(|w| push_open(out, w)),
        None => {}
    }
}

fn blanks(e: &Element, out: &mut Vec<Item>) {
    for c in e.elements() {
        if c.name == "blank" {
            if let Some(id) = c.id() {
                let alts = c.attr("alts").map(list).unwrap_or_default();
                let key = Key::Blank { answer: c.attr("answer").unwrap_or_default().into(), alts, hint: c.attr("hint").map(String::from) };
                out.push(Item { id: id.into(), key });
            }
        } else {
            blanks(c, out);
        }
    }
}

/// The lesson without anything a student must not see: teacher notes,
/// answers and alternatives of blanks, which options are right, the truth
/// of statements, the positions of sequence items, model answers, rubrics
/// not shared with students, and anything a student wrote into the
/// document. Hints stay.
pub fn for_students(root: &Element) -> Element {
    let mut out = root.clone();
    strip(&mut out);
    out
}

fn strip(e: &mut Element) {
    e.children.retain(|n| {
        !matches!(n, Node::Element(c) if c.name == "note" || (c.name == "answer" && e.name == "question") || (c.name == "rubric" && c.attr("shared") != Some("true")))
    });
    let hidden: &[&str] = match e.name.as_str() {
        "blank" => &["answer", "alts", "student-answer"],
        "option" => &["correct"],
        "statement" => &["answer"],
        "item" => &["position"],
        _ => &[],
    };
    e.attrs.retain(|(k, _)| !hidden.contains(&k.as_str()));
    for n in &mut e.children {
        if let Node::Element(c) = n {
            strip(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    const LESSON: &str = r#"<lesson>
  <note id="n1">Secret plan</note>
  <exercise id="e1" type="fill-blanks"><p id="p1">Je <blank id="b1" answer="suis" alts="Suis ,  sui" hint="être"/> ici, <em>tu <blank id="b2" answer="es"/></em>.</p></exercise>
  <exercise id="e2" type="multiple-choice"><question id="q1"><prompt>Pick</prompt><option id="o1">A</option><option id="o2" correct="true">B</option></question>
    <question id="q2" multiple="true"><prompt>Both</prompt><option id="o3" correct="true">C</option><option id="o4" correct="true">D</option><option id="o5">E</option></question></exercise>
  <exercise id="e3" type="true-false"><statement id="s1" answer="false">The sun is cold.</statement></exercise>
  <exercise id="e4" type="sequencing"><item id="i1" position="2">Second</item><item id="i2" position="1">First</item><item id="i3" position="3">Third</item></exercise>
  <exercise id="e5" type="short-answer"><question id="q3"><prompt>Why?</prompt><answer>Because of the model answer</answer></question></exercise>
  <exercise id="e6" type="writing"><prompt>Write</prompt><writing-area id="w1"/></exercise>
</lesson>"#;

    fn item(id: &str) -> Item {
        items(&parse(LESSON).unwrap()).into_iter().find(|i| i.id == id).unwrap()
    }

    #[test]
    fn every_kind_has_its_items_in_order() {
        let ids: Vec<String> = items(&parse(LESSON).unwrap()).into_iter().map(|i| i.id).collect();
        assert_eq!(ids, ["b1", "b2", "q1", "q2", "s1", "e4", "q3", "w1"]);
    }

    #[test]
    fn blanks_take_alternatives_ignoring_case_and_spaces() {
        let b = item("b1");
        assert_eq!(b.mark("suis"), Some(true));
        assert_eq!(b.mark("  SUIS "), Some(true));
        assert_eq!(b.mark("sui"), Some(true));
        assert_eq!(b.mark("es"), Some(false));
        assert_eq!(b.mark("   "), None);
    }

    #[test]
    fn choices_statements_and_sequences_are_marked() {
        assert_eq!(item("q1").mark("o2"), Some(true));
        assert_eq!(item("q1").mark("o1"), Some(false));
        assert_eq!(item("q2").mark("o4,o3"), Some(true));
        assert_eq!(item("q2").mark("o3"), Some(false));
        assert_eq!(item("s1").mark("false"), Some(true));
        assert_eq!(item("s1").mark("true"), Some(false));
        assert_eq!(item("e4").mark("i2,i1,i3"), Some(true));
        assert_eq!(item("e4").mark("i1,i2,i3"), Some(false));
        assert_eq!(item("q3").mark("anything"), None);
        assert!(!item("w1").graded());
    }

    #[test]
    fn the_students_lesson_has_no_keys_or_notes() {
        let xml = for_students(&parse(LESSON).unwrap()).to_xml();
        for hidden in ["Secret plan", "suis", "correct", "answer=", "<answer", "position", "model answer"] {
            assert!(!xml.contains(hidden), "{hidden} in {xml}");
        }
        assert!(xml.contains(r#"hint="être""#) && xml.contains("The sun is cold.") && xml.contains("Second"), "{xml}");
    }
}
