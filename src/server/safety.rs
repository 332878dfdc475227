//! Students safe with the tutor (issue #69): how much help the tutor gives
//! on each lesson (`policy`), the flags a conversation raises for the
//! people who must see them (`rules`, `flags`), and the check that keeps
//! answers out of a "hints only" tutor's replies (`guard`).
//!
//! A flag never stops a student: a message that raised one is answered
//! like any other, and one about harm or abuse is answered with care and
//! ends with the school's sentence on where to find help.

pub mod flags;
pub mod guard;
pub mod policy;
pub mod routes;
pub mod rules;

use crate::{
    models::{FlagCategory, TutorPolicy, UserInfo},
    server::{db::Db, error::{AppError, Result}},
};

/// What a student's turn must do, decided before it starts.
#[derive(Clone, Debug, Default)]
pub struct StudentSafety {
    pub school_id: String,
    pub lesson_id: String,
    pub chat_id: String,
    /// Under "hints only": the answers its reply must not carry.
    pub guard: Option<Vec<String>>,
    /// For a message about harm or abuse: the school's help sentence, which
    /// ends the reply.
    pub help: Option<String>,
}

/// What the model is told beside a message that raised a harm or abuse
/// flag (the student never sees it; their words are kept as they wrote them).
pub const CARE_NOTE: &str = "(A note from Margin, not the student's words: this message may mean the student is at risk or is being hurt. Answer with warmth and care and take it seriously. Do not quiz or lecture them, and do not go back to the lesson for now. Encourage them to talk to a teacher or another adult they trust.)";

/// Before a student's turn with the tutor on `lesson_id`: refuses it when
/// the lesson's tutor is off (with the sentence students read), checks the
/// message and keeps its flags (unless `raise` is false: a retry of a
/// message already checked), and says what the turn must do.
pub async fn before_student_turn(db: &Db, student: &UserInfo, lesson_id: &str, chat_id: &str, content: &str, key_xml: &str, raise: bool) -> Result<StudentSafety> {
    let policy = policy::of_lesson(db, lesson_id).await?;
    if policy == TutorPolicy::Off {
        return Err(AppError::Forbidden(policy.for_students().unwrap_or_default().to_string()));
    }
    let found = rules::check(content);
    let excerpt = rules::excerpt(content);
    for &category in found.iter().filter(|_| raise) {
        let flag = flags::NewFlag { school_id: &student.school_id, student_id: &student.id, lesson_id, chat_id, category, excerpt: &excerpt, from_student: true };
        // Kept or not, the student is answered: a failure is logged loudly.
        if let Err(e) = flags::raise(db, flag).await {
            tracing::error!(error = %e, category = category.as_str(), "a flag could not be kept");
        }
    }
    let at_risk = found.iter().any(|c| matches!(c, FlagCategory::Harm | FlagCategory::Abuse));
    let help = if at_risk { Some(policy::help_sentence(db, &student.school_id).await?) } else { None };
    let guard = (policy == TutorPolicy::Hints).then(|| guard::answers_of(key_xml));
    Ok(StudentSafety { school_id: student.school_id.clone(), lesson_id: lesson_id.to_string(), chat_id: chat_id.to_string(), guard, help })
}

/// After a student's turn: the tutor's own reply is checked by the same
/// rules, and what it raised is kept (as the tutor's, not the student's).
pub async fn after_student_turn(db: &Db, safety: &StudentSafety, student_id: &str, reply: &str) {
    for category in rules::check(reply) {
        let excerpt = rules::excerpt(reply);
        let flag = flags::NewFlag {
            school_id: &safety.school_id,
            student_id,
            lesson_id: &safety.lesson_id,
            chat_id: &safety.chat_id,
            category,
            excerpt: &excerpt,
            from_student: false,
        };
        if let Err(e) = flags::raise(db, flag).await {
            tracing::error!(error = %e, category = category.as_str(), "a flag on a tutor's reply could not be kept");
        }
    }
}
