//! What the format allows: the elements, where each may stand, and their
//! attributes. `docs/lesson-format.md` explains the same for people.

use serde::{Deserialize, Serialize};

/// Elements that may stand directly inside `<lesson>`.
pub const BLOCK_ELEMENTS: &[&str] = &["h1", "h2", "h3", "p", "note", "writing-area", "exercise"];

/// Elements that carry a stable `id` (assigned when missing).
pub const ID_ELEMENTS: &[&str] = &[
    "h1", "h2", "h3", "p", "note", "writing-area", "exercise", "question", "option", "statement", "item", "blank", "rubric",
    "criterion",
];

/// The kinds of exercise, named by `<exercise type="…">`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExerciseKind {
    FillBlanks,
    MultipleChoice,
    TrueFalse,
    Sequencing,
    ShortAnswer,
    Writing,
}

impl ExerciseKind {
    pub const ALL: [ExerciseKind; 6] = [
        Self::FillBlanks,
        Self::MultipleChoice,
        Self::TrueFalse,
        Self::Sequencing,
        Self::ShortAnswer,
        Self::Writing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::FillBlanks => "fill-blanks",
            Self::MultipleChoice => "multiple-choice",
            Self::TrueFalse => "true-false",
            Self::Sequencing => "sequencing",
            Self::ShortAnswer => "short-answer",
            Self::Writing => "writing",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A heading a teacher recognises.
    pub fn label(self) -> &'static str {
        match self {
            Self::FillBlanks => "Fill in the blanks",
            Self::MultipleChoice => "Multiple choice",
            Self::TrueFalse => "True or false",
            Self::Sequencing => "Put in order",
            Self::ShortAnswer => "Short answer",
            Self::Writing => "Writing",
        }
    }

    /// The elements allowed directly inside an exercise of this kind (besides
    /// an optional leading `<instructions>`).
    pub fn parts(self) -> &'static [&'static str] {
        match self {
            Self::FillBlanks => &["p"],
            Self::MultipleChoice | Self::ShortAnswer => &["question"],
            Self::TrueFalse => &["statement"],
            Self::Sequencing => &["item"],
            Self::Writing => &["prompt", "writing-area", "rubric"],
        }
    }
}

/// Attributes an element may carry, and which of them are required.
pub fn attributes(element: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match element {
        "lesson" => (&["title", "lang", "standards"], &[]),
        "h1" | "h2" | "h3" | "p" | "note" => (&["id"], &[]),
        "statement" => (&["id", "answer"], &["answer"]),
        "item" => (&["id", "position"], &["position"]),
        "option" => (&["id", "correct"], &[]),
        "question" => (&["id", "multiple"], &[]),
        "writing-area" => (&["id", "lines", "placeholder"], &[]),
        "exercise" => (&["id", "type", "title", "standards"], &["type"]),
        "blank" => (&["id", "answer", "alts", "hint", "student-answer"], &["answer"]),
        "rubric" => (&["id", "shared"], &[]),
        "criterion" => (&["id", "name"], &["name"]),
        "level" => (&["points"], &["points"]),
        _ => (&[], &[]),
    }
}

/// Elements whose children are other elements laid out one per line (as
/// opposed to running text with inline markup).
pub fn holds_blocks(element: &str) -> bool {
    matches!(element, "lesson" | "exercise" | "question" | "rubric" | "criterion")
}

/// Whether an id is well formed: a letter, then letters, digits, `-` or `_`.
pub fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
