//! Standard codes on a lesson, as checkable facts.
//!
//! `<lesson>` and `<exercise>` may carry `standards="…"`: codes separated by
//! spaces, as a framework writes them (its items' `humanCodingScheme`). The
//! format checks only their shape (`shape_problem`, called by `validate`);
//! whether a code is real is a question for the school's frameworks, which
//! the server loads into a `Catalog`, and `check` asks it on every write. An
//! unknown code is an error naming the nearest real ones, so the model
//! corrects itself as it does for the XML, and a teacher's typo is caught
//! before it is saved.

use super::Element;

/// At most this many codes on one element.
pub const MAX_CODES: usize = 12;
/// The longest code taken.
pub const MAX_CODE_LEN: usize = 80;

/// The codes of a `standards` attribute, in order, each once.
pub fn codes(value: &str) -> Vec<&str> {
    let mut seen = Vec::new();
    for code in value.split_whitespace() {
        if !seen.contains(&code) {
            seen.push(code);
        }
    }
    seen
}

/// What is wrong with the shape of a `standards` value, if anything.
pub fn shape_problem(value: &str) -> Option<String> {
    let codes = codes(value);
    if codes.is_empty() {
        return Some("`standards` is empty: list one or more codes separated by spaces, or leave the attribute out.".into());
    }
    if codes.len() > MAX_CODES {
        return Some(format!("`standards` lists {} codes; at most {MAX_CODES} fit on one element.", codes.len()));
    }
    codes.iter().find(|c| c.chars().count() > MAX_CODE_LEN || c.chars().any(char::is_control)).map(|c| {
        format!("`{}` is not a standard code: codes are at most {MAX_CODE_LEN} characters, without control characters.", short(c))
    })
}

pub(crate) fn short(code: &str) -> String {
    let mut s: String = code.chars().take(40).collect();
    if code.chars().count() > 40 {
        s.push('…');
    }
    s
}

/// An element that carries codes: the lesson itself (`id` `None`) or an
/// exercise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tagged<'a> {
    pub id: Option<&'a str>,
    /// The exercise's title, or its kind, for people.
    pub label: String,
    pub codes: Vec<&'a str>,
    pub line: u32,
    pub column: u32,
}

/// Every element of the lesson that carries codes, the lesson first.
pub fn tagged(root: &Element) -> Vec<Tagged<'_>> {
    fn add<'a>(out: &mut Vec<Tagged<'a>>, e: &'a Element, id: Option<&'a str>, label: String) {
        if let Some(value) = e.attr("standards") {
            out.push(Tagged { id, label, codes: codes(value), line: e.line, column: e.column });
        }
    }
    let mut out = Vec::new();
    add(&mut out, root, None, root.attr("title").unwrap_or("The lesson").to_string());
    for (n, e) in root.elements().filter(|e| e.name == "exercise").enumerate() {
        let kind = e.attr("type").and_then(super::ExerciseKind::from_name).map(|k| k.label()).unwrap_or("Exercise");
        let label = match e.attr("title") {
            Some(t) if !t.trim().is_empty() => format!("Exercise {}: {}", n + 1, t.trim()),
            _ => format!("Exercise {}: {kind}", n + 1),
        };
        add(&mut out, e, e.id(), label);
    }
    out
}

/// Every code the lesson names, each once, in order.
pub fn all_codes(root: &Element) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tagged(root) {
        for c in t.codes {
            if !out.iter().any(|o| o == c) {
                out.push(c.to_string());
            }
        }
    }
    out
}

#[cfg(feature = "ssr")]
mod catalog;
#[cfg(feature = "ssr")]
pub use catalog::{check, statement_excerpt, Catalog, Standard};

#[cfg(test)]
mod tests;
