//! The lesson document: an XML format of headings, paragraphs and exercises.
//!
//! The server parses, checks and renders every document, so that the agent's
//! edits, the teacher's XML editor and the rendered lesson all agree on one
//! format; the browser receives documents already rendered (`LessonHtml`) and
//! uses only the error type and `Audience` from here (the linker leaves the
//! parser out of its bundle). The
//! format itself is described for people in `docs/lesson-format.md`; the rules
//! here are the single source of truth and that file must follow them.
//!
//! The pipeline is `parse` (well-formed XML, no DTD, size and depth caps) →
//! `validate` (known elements and attributes, exercise rules) → `assign_ids`
//! (every block gets a stable id; existing ids are kept) → `to_xml`.

/// How the small enums of the API (a status, a role, a kind) are written in
/// JSON: as one lowercase word. Written by hand rather than derived because a
/// derived enum deserialiser is a visitor of its own in the browser bundle,
/// while these all read a string (code the bundle has anyway) and look it up.
/// An unknown word is an error naming it, as a derived one would be. It
/// stands here, at the bottom layer, so that every layer above can use it.
/// `wire_enum!(Type { Variant => "word", … })`: the words, and serde both ways.
#[macro_export]
macro_rules! wire_enum {
    ($t:ty { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $t {
            /// Every variant with its word on the wire.
            pub(crate) const WIRE: &'static [($t, &'static str)] = &[$((<$t>::$v, $s)),+];

            /// The word this value is written as (in JSON and in the database).
            pub fn as_str(self) -> &'static str {
                Self::WIRE.iter().find(|(v, _)| *v == self).map(|(_, s)| *s).unwrap_or("")
            }

            /// The value a word stands for.
            pub fn from_wire(word: &str) -> Option<Self> {
                Self::WIRE.iter().find(|(_, s)| *s == word).map(|(v, _)| *v)
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = String::deserialize(d)?;
                Self::from_wire(&word).ok_or_else(|| serde::de::Error::unknown_variant(&word, &[]))
            }
        }
    };
}

pub mod answers;
#[cfg(feature = "ssr")]
mod archive;
pub mod blocks;
pub mod parts;
mod change;
#[cfg(feature = "ssr")]
mod changes;
mod error;
mod html;
mod ids;
pub mod open;
#[cfg(feature = "ssr")]
mod merge;
#[cfg(feature = "ssr")]
mod paper;
mod parse;
#[cfg(feature = "ssr")]
pub mod qti;
#[cfg(feature = "ssr")]
pub mod reading;
pub mod rubric;
mod schema;
pub mod standards;
mod tree;
mod validate;
mod walk;
#[cfg(feature = "ssr")]
pub mod word;

pub use change::{Change, ChangeKind};
#[cfg(feature = "ssr")]
pub use changes::changes;
pub use error::LessonError;
pub use html::{render_both, to_answer_sheet, to_html, Audience, ItemFeedback, LessonHtml};
pub use ids::{assign_ids, assign_ids_after, assign_ids_among, ids_of};
#[cfg(feature = "ssr")]
pub use merge::merge;
#[cfg(feature = "ssr")]
pub use paper::{to_paper, Sheet};
pub use parse::{parse, MAX_BYTES, MAX_DEPTH};
pub use schema::{ExerciseKind, BLOCK_ELEMENTS, ID_ELEMENTS};
pub use tree::{escape_attr, escape_text, Element, Node};
pub use validate::validate;

/// Parses and validates a lesson, assigns missing ids and returns the tidy XML
/// to store. Every problem found is returned at once, so it can all be fixed
/// in one go.
pub fn normalize(xml: &str) -> Result<Element, Vec<LessonError>> {
    let mut root = parse(xml).map_err(|e| vec![e])?;
    let errors = validate(&root);
    if !errors.is_empty() {
        return Err(errors);
    }
    assign_ids(&mut root);
    Ok(root)
}

/// `normalize` for a new version of a lesson: ids are given out only where
/// `previous` (the version it replaces, when it could be read) did not use
/// them, and none in `taken` (the ids of its linked lessons: `ids`).
pub fn normalize_after(xml: &str, previous: Option<&Element>, taken: &std::collections::HashSet<String>) -> Result<Element, Vec<LessonError>> {
    let mut root = parse(xml).map_err(|e| vec![e])?;
    let errors = validate(&root);
    if !errors.is_empty() {
        return Err(errors);
    }
    assign_ids_among(&mut root, previous, taken);
    Ok(root)
}

/// The lines a teacher or the model reads for a list of errors.
pub fn describe_errors(errors: &[LessonError]) -> String {
    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests;
