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
pub mod opinion;
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
    /// What only an often innocent word suggested: the model is asked
    /// (`opinion`) as the turn starts, and `message` is what it reads.
    pub unsure: Vec<FlagCategory>,
    pub message: String,
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
        let entry = crate::server::audit::NewEntry {
            school_id: &student.school_id,
            action: crate::models::AuditAction::Refusal,
            actor: crate::models::AuditActor::Student,
            person_id: &student.id,
            lesson_id: Some(lesson_id),
            turn_id: None,
            model: "",
            tokens: 0,
            outcome: "tutor_off",
            tools: Vec::new(),
        };
        crate::server::audit::record(db, entry).await;
        return Err(AppError::Forbidden(policy.for_students().unwrap_or_default().to_string()));
    }
    let (found, unsure) = if raise { rules::check_both(content) } else { (Vec::new(), Vec::new()) };
    let mut s = StudentSafety {
        school_id: student.school_id.clone(),
        lesson_id: lesson_id.to_string(),
        chat_id: chat_id.to_string(),
        guard: (policy == TutorPolicy::Hints).then(|| guard::answers_of(key_xml)),
        help: None,
        unsure,
        message: content.to_string(),
    };
    s.raise(db, &student.id, &found).await?;
    Ok(s)
}

impl StudentSafety {
    /// Keeps the student's message's flags in `found`; one about harm or
    /// abuse asks for the school's help sentence.
    async fn raise(&mut self, db: &Db, student_id: &str, found: &[FlagCategory]) -> Result<()> {
        let excerpt = rules::excerpt(&self.message);
        for &category in found {
            let flag = flags::NewFlag {
                school_id: &self.school_id,
                student_id,
                lesson_id: &self.lesson_id,
                chat_id: &self.chat_id,
                category,
                excerpt: &excerpt,
                from_student: true,
            };
            // Kept or not, the student is answered: a failure is logged loudly.
            if let Err(e) = flags::raise(db, flag).await {
                tracing::error!(error = %e, category = category.as_str(), "a flag could not be kept");
            }
        }
        if self.help.is_none() && found.iter().any(|c| matches!(c, FlagCategory::Harm | FlagCategory::Abuse)) {
            self.help = Some(crate::server::accounts::help::help_sentence(db, &self.school_id).await?);
        }
        Ok(())
    }

    /// As the turn starts: where the rules were unsure, the model's opinion
    /// (metered as the turn's); what it confirms is flagged. If it cannot
    /// be asked, the rules' flags stand.
    pub async fn settle_unsure(&mut self, db: &Db, agent: &crate::agent::run::Agent, student_id: &str, meter: &dyn crate::agent::meter::Meter) {
        if self.unsure.is_empty() {
            return;
        }
        let unsure = std::mem::take(&mut self.unsure);
        let confirmed = match opinion::ask(agent, &self.message, meter).await {
            Some(said) => said,
            None => unsure,
        };
        if let Err(e) = self.raise(db, student_id, &confirmed).await {
            tracing::error!(error = %e, "the help sentence could not be read");
        }
    }
}

/// After a student's turn: the tutor's own reply is checked by the same
/// rules, and what it raised is kept (as the tutor's, not the student's).
pub async fn after_student_turn(db: &Db, safety: &StudentSafety, student_id: &str, reply: &str) {
    // The help sentence is the school's, not the tutor's words.
    let reply = safety.help.as_deref().and_then(|h| reply.strip_suffix(h)).unwrap_or(reply);
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
