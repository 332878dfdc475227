//! The measured reading level of what students read in a lesson: its
//! paragraphs, and each exercise's instructions, sentences (blanks filled
//! with their answers), prompts and statements. Headings, options, items,
//! teacher notes and model answers are not running text and are left out.
//!
//! The formula follows the lesson's `lang` (English when it has none):
//! Flesch–Kincaid grade for English, the Wiener Sachtextformel (a German
//! school grade) for German, and LIX for the other languages, whose scale
//! is read as a grade where the formula gives one. Syllables and the
//! formulas are the `readsight` crate's (a port of ReadSight, checked
//! against its reference outputs, with TeX hyphenation patterns per
//! language), rather than a hand-written syllable guess.
//!
//! A text of fewer than `MIN_WORDS` words is not measured: a formula's
//! number for two sentences says nothing. A very long lesson is measured
//! on its first `SAMPLE_WORDS` words.

use std::{cell::RefCell, collections::HashMap, rc::Rc};

use readsight::ReadSight;

use super::{schema::ExerciseKind, tree::{Element, Node}};

/// The fewest words measured.
pub const MIN_WORDS: usize = 30;
/// The most words a lesson's level is measured on. Measuring costs about
/// 1.4 µs a word (release build), and the level is measured on every save
/// and for both sides of every change list, so a lesson at the size cap
/// (tens of thousands of words) is measured on a sample, as readability
/// formulas were made to be (Flesch used samples of 100 words): 1,000
/// words, all of a lesson of usual length, about 1.4 ms.
pub const SAMPLE_WORDS: usize = 1_000;
/// How far from a target grade still counts as at it.
pub const BAND: f64 = 0.5;

/// One measure of a text.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// The formula, as a teacher reads its name.
    pub formula: &'static str,
    /// The formula's number, rounded to one decimal.
    pub score: f64,
    /// The school grade it stands for, where the formula gives one.
    pub grade: Option<f64>,
    pub words: usize,
}

impl Level {
    /// "grade 6.2", or "LIX 38" for a formula without grades.
    pub fn said(&self) -> String {
        match self.grade {
            Some(g) => format!("grade {g:.1}"),
            None => format!("{} {:.0}", self.formula, self.score),
        }
    }

    /// How far from `target` (a grade), when this measure has grades.
    pub fn off_by(&self, target: f64) -> Option<f64> {
        self.grade.map(|g| g - target)
    }
}

/// The language code `readsight` knows `lang` by, and the formula (its
/// name there, and as said) to use for it.
fn formula_for(lang: &str) -> (String, &'static str, &'static str) {
    let lang = lang.trim().to_ascii_lowercase();
    let primary = lang.split(['-', '_']).next().unwrap_or("").to_string();
    match primary.as_str() {
        "" | "en" => ((if lang == "en-gb" { "en-gb" } else { "en-us" }).into(), "flesch_kincaid_grade_level", "Flesch–Kincaid"),
        "de" => ("de-1996".into(), "wiener_sachtextformel", "Wiener Sachtextformel"),
        _ => (primary, "lix", "LIX"),
    }
}

/// One engine per language and thread, built once (building one reads
/// its patterns; an engine cannot move between threads); `None` for a
/// language `readsight` does not have.
fn engine(code: &str) -> Option<Rc<ReadSight>> {
    thread_local! {
        static ENGINES: RefCell<HashMap<String, Option<Rc<ReadSight>>>> = RefCell::new(HashMap::new());
    }
    ENGINES.with(|engines| engines.borrow_mut().entry(code.to_string()).or_insert_with(|| ReadSight::new(code).ok().map(Rc::new)).clone())
}

/// The measure of `text` in `lang`; `None` when it is too short or the
/// language cannot be measured.
pub fn measure(text: &str, lang: &str) -> Option<Level> {
    if text.split_whitespace().count() < MIN_WORDS {
        return None;
    }
    score(text, lang)
}

/// The formula's measure of any text, however short (`measure` is what
/// the app shows).
pub(crate) fn score(text: &str, lang: &str) -> Option<Level> {
    let words = text.split_whitespace().count();
    let (code, name, formula) = formula_for(lang);
    let engine = engine(&code)?;
    let r = engine.score(name, text).ok()?;
    // The Sachtextformel's number is itself a school grade.
    let grade = r.grade_level.or((name == "wiener_sachtextformel").then_some(r.score));
    Some(Level { formula, score: (r.score * 10.0).round() / 10.0, grade: grade.map(|g| (g * 10.0).round() / 10.0), words })
}

/// The lesson's language, as its `lang` says (English when it says none).
pub fn lang_of(root: &Element) -> &str {
    root.attr("lang").unwrap_or("en")
}

/// The running text students read in `e`, blanks read as their answers.
fn running(e: &Element, out: &mut String) {
    for n in &e.children {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Element(c) if c.name == "blank" => out.push_str(c.attr("answer").unwrap_or("")),
            Node::Element(c) => running(c, out),
        }
    }
}

/// A part of running text, ended as a sentence (a prompt without a full
/// stop must not run into the next one).
fn sentence(e: &Element, out: &mut String) {
    let mut s = String::new();
    running(e, &mut s);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(&s);
    if !s.ends_with(['.', '!', '?', ':', '…', '»', '"', '”']) {
        out.push('.');
    }
}

/// Each block students read, by id, with what it is and its text.
pub fn block_texts(root: &Element) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut exercises = 0;
    for b in root.elements() {
        let mut text = String::new();
        let what = match b.name.as_str() {
            "p" => {
                sentence(b, &mut text);
                "paragraph".to_string()
            }
            "exercise" => {
                exercises += 1;
                for part in b.elements() {
                    match part.name.as_str() {
                        "instructions" | "p" | "statement" | "prompt" => sentence(part, &mut text),
                        "question" => part.elements().filter(|c| c.name == "prompt").for_each(|p| sentence(p, &mut text)),
                        _ => {}
                    }
                }
                let kind = b.attr("type").and_then(ExerciseKind::from_name).map_or("exercise", |k| k.label());
                format!("exercise {exercises} ({kind})")
            }
            _ => continue,
        };
        if let Some(id) = b.id() {
            out.push((id.to_string(), what, text));
        }
    }
    out
}

/// The whole lesson's measure, on its first `SAMPLE_WORDS` words of
/// running text (all of a lesson of usual length).
pub fn of_lesson(root: &Element) -> Option<Level> {
    let mut sample: Vec<&str> = Vec::new();
    let blocks = block_texts(root);
    for (_, _, text) in &blocks {
        let room = SAMPLE_WORDS - sample.len();
        if room == 0 {
            break;
        }
        sample.extend(text.split_whitespace().take(room));
    }
    measure(&sample.join(" "), lang_of(root))
}

/// Each block's measure, for those long enough to measure.
pub fn of_blocks(root: &Element) -> Vec<(String, String, Level)> {
    let lang = lang_of(root);
    block_texts(root).into_iter().filter_map(|(id, what, text)| Some((id, what, measure(&text, lang)?))).collect()
}

/// "Reading level: grade 6.2 → 4.1", when the lesson's level moved by at
/// least `BAND` grades (a whole point on a scale without grades), both
/// versions being long enough to measure.
pub fn change(old: &Element, new: &Element) -> Option<String> {
    let (a, b) = (of_lesson(old)?, of_lesson(new)?);
    let moved = match (a.grade, b.grade) {
        (Some(x), Some(y)) => (x - y).abs() >= BAND,
        _ => a.formula != b.formula || (a.score - b.score).abs() >= BAND * 2.0,
    };
    moved.then(|| format!("Reading level: {} → {}", a.said(), b.said()))
}

#[cfg(test)]
mod tests;
