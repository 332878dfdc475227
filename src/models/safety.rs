//! Students' safety with the tutor, as pages see it: how much help the tutor
//! gives on a lesson (`TutorPolicy`), and the flags a student's conversation
//! raised for their teachers (`Flag`). Shared by the server, which decides
//! both, and the pages that show them.

use serde::{Deserialize, Serialize};

/// How much the tutor helps on one lesson, set by its teacher when
/// publishing (and changeable later). Students see it on the lesson.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TutorPolicy {
    /// Hints, checks and explanations: the tutor as it always was.
    #[default]
    Full,
    /// The tutor guides; an answer to one of the lesson's items never
    /// reaches the student (the server holds the reply's text back until it
    /// knows, `server::safety::guard`).
    Hints,
    /// No tutor for this lesson (a test).
    Off,
}

crate::wire_enum::wire_enum!(TutorPolicy { Full => "full", Hints => "hints", Off => "off" });

impl TutorPolicy {
    /// What the teacher picks from.
    pub const ALL: [TutorPolicy; 3] = [TutorPolicy::Full, TutorPolicy::Hints, TutorPolicy::Off];

    /// The choice as the teacher reads it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Full => "Full help",
            Self::Hints => "Hints only",
            Self::Off => "Off",
        }
    }

    /// What students read on the lesson (none for full help).
    pub fn for_students(self) -> Option<&'static str> {
        match self {
            Self::Full => None,
            Self::Hints => Some("Your teacher has set the tutor to hints only for this lesson: it helps you think, but it won't give you the answers."),
            Self::Off => Some("Your teacher has turned the tutor off for this lesson."),
        }
    }
}

/// What a flag is about. Kept small and documented (`docs/safety.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagCategory {
    /// A risk of harm to the student or to others.
    Harm,
    /// Abuse or bullying disclosed.
    Abuse,
    /// Personal data shared: an address, a phone number, a password.
    Personal,
    /// Trying to get the answers, or to make the tutor do something else.
    Misuse,
}

crate::wire_enum::wire_enum!(FlagCategory { Harm => "harm", Abuse => "abuse", Personal => "personal", Misuse => "misuse" });

impl FlagCategory {
    pub const ALL: [FlagCategory; 4] = [FlagCategory::Harm, FlagCategory::Abuse, FlagCategory::Personal, FlagCategory::Misuse];

    /// The category as a teacher reads it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Harm => "Risk of harm",
            Self::Abuse => "Abuse or bullying",
            Self::Personal => "Personal data shared",
            Self::Misuse => "Misuse of the tutor",
        }
    }
}

/// One flag, as its teacher (or the school's admin) sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flag {
    pub id: String,
    pub category: FlagCategory,
    /// The words that raised it, with a little around them.
    pub excerpt: String,
    /// Whether the student wrote it (else the tutor's reply did).
    pub from_student: bool,
    pub student_id: String,
    pub student_email: String,
    pub lesson_id: String,
    pub lesson_title: String,
    pub created_at: String,
    /// When, and by whom, it was acknowledged (never deleted).
    pub acknowledged_at: Option<String>,
    pub acknowledged_by: Option<String>,
    /// The viewer teaches the lesson, so the conversation is theirs to open
    /// (an admin sees other teachers' flags, not their students' work).
    #[serde(default)]
    pub yours: bool,
}
