//! The school's frameworks as one lookup: exact codes, near matches for a
//! code that is not there, and search by code or words (server only: the
//! browser never checks codes).

use std::collections::HashMap;

use super::{short, tagged};
use crate::{Element, LessonError};

/// How many near matches an unknown code's error names.
const NEAR: usize = 3;

/// One statement of a framework.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standard {
    /// As teachers and lessons write it (`humanCodingScheme`).
    pub code: String,
    /// What it asks of students (`fullStatement`).
    pub statement: String,
    /// The framework's title.
    pub framework: String,
}

/// The standards a school may tag lessons with: every framework it has.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    items: Vec<Standard>,
    by_code: HashMap<String, usize>,
}

impl Catalog {
    /// A catalog of `items`; a code listed twice (two frameworks) is kept once,
    /// the first.
    pub fn new(items: Vec<Standard>) -> Self {
        let mut by_code = HashMap::new();
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            if !by_code.contains_key(&item.code) {
                by_code.insert(item.code.clone(), kept.len());
                kept.push(item);
            }
        }
        Self { items: kept, by_code }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The standard with exactly this code.
    pub fn get(&self, code: &str) -> Option<&Standard> {
        self.by_code.get(code).map(|&i| &self.items[i])
    }

    /// The real codes nearest to `code`, nearest first: the same code in
    /// other letters' case, then the closest spellings.
    pub fn near(&self, code: &str) -> Vec<&Standard> {
        let wanted = code.to_lowercase();
        let mut scored: Vec<(f64, &Standard)> = self
            .items
            .iter()
            .map(|s| {
                let have = s.code.to_lowercase();
                let score = if have == wanted { 2.0 } else { strsim::normalized_levenshtein(&wanted, &have) };
                (score, s)
            })
            .filter(|(score, _)| *score >= 0.5)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.code.cmp(&b.1.code)));
        scored.into_iter().take(NEAR).map(|(_, s)| s).collect()
    }

    /// Standards whose code starts with `query`, or whose statement holds
    /// every word of it; codes first. At most `most`.
    pub fn search(&self, query: &str, most: usize) -> Vec<&Standard> {
        let q = query.trim().to_lowercase();
        if q.is_empty() {
            return Vec::new();
        }
        let words: Vec<&str> = q.split_whitespace().collect();
        let mut by_code: Vec<&Standard> = self.items.iter().filter(|s| s.code.to_lowercase().starts_with(&q)).collect();
        by_code.sort_by(|a, b| a.code.len().cmp(&b.code.len()).then_with(|| a.code.cmp(&b.code)));
        let by_words: Vec<&Standard> = self
            .items
            .iter()
            .filter(|s| {
                let text = s.statement.to_lowercase();
                !by_code.iter().any(|c| c.code == s.code) && words.iter().all(|w| text.contains(w))
            })
            .collect();
        let mut out: Vec<&Standard> = by_code;
        out.extend(by_words);
        out.truncate(most);
        out
    }
}

/// The errors of a lesson's codes against the school's catalog: one per
/// unknown code, with the nearest real codes and what they say.
pub fn check(root: &Element, catalog: &Catalog) -> Vec<LessonError> {
    let mut errors = Vec::new();
    for t in tagged(root) {
        let path = match t.id {
            Some(id) => format!("exercise#{id}"),
            None => "lesson".to_string(),
        };
        for code in &t.codes {
            if catalog.get(code).is_some() {
                continue;
            }
            let message = if catalog.is_empty() {
                format!(
                    "the standard code `{}` cannot be checked: this school has no standards frameworks loaded. Leave `standards` out, or ask the school's admin to add the framework.",
                    short(code)
                )
            } else {
                let near = catalog.near(code);
                if near.is_empty() {
                    format!("`{}` is not a code in this school's frameworks. Search them for the right one, or leave it out.", short(code))
                } else {
                    let names: Vec<String> = near.iter().map(|s| format!("{} ({})", s.code, statement_excerpt(&s.statement))).collect();
                    format!("`{}` is not a code in this school's frameworks. Nearest: {}.", short(code), names.join("; "))
                }
            };
            errors.push(LessonError::new(t.line, t.column, path.clone(), message));
        }
    }
    errors
}

/// The start of a statement, for an error message or a list.
pub fn statement_excerpt(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= 90 {
        return s;
    }
    let mut out: String = s.chars().take(89).collect();
    out.push('…');
    out
}

