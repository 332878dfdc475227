//! The sentence a school gives its students who may be at risk: who to
//! talk to at this school. A school's setting, kept on the school and set
//! by its admin; the tutor ends a reply about harm or abuse with it
//! (`server::safety`).

use crate::server::{
    db::Db,
    error::{AppError, Result},
};

/// The sentence the tutor adds for a student who may be at risk, when the
/// school has not written its own.
pub const DEFAULT_HELP: &str = "If you are thinking about hurting yourself or someone else, or someone is hurting you, please talk to a teacher or another adult you trust today. You don't have to deal with this alone.";

/// The longest help sentence a school may write.
pub const HELP_MAX_CHARS: usize = 600;

/// The school's help sentence, or the server's.
pub async fn help_sentence(db: &Db, school_id: &str) -> Result<String> {
    let own: Option<Option<String>> = sqlx::query_scalar("SELECT help_sentence FROM schools WHERE id = $1").bind(school_id).fetch_optional(db).await?;
    Ok(own.flatten().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| DEFAULT_HELP.to_string()))
}

/// The school's own help sentence, if it wrote one.
pub async fn own_help_sentence(db: &Db, school_id: &str) -> Result<Option<String>> {
    let own: Option<Option<String>> = sqlx::query_scalar("SELECT help_sentence FROM schools WHERE id = $1").bind(school_id).fetch_optional(db).await?;
    Ok(own.flatten())
}

/// Sets (or, empty, clears) the school's help sentence.
pub async fn set_help_sentence(db: &Db, school_id: &str, sentence: &str) -> Result<()> {
    let sentence = sentence.trim();
    let chars = sentence.chars().count();
    if chars > HELP_MAX_CHARS {
        return Err(AppError::PayloadTooLarge(format!("The sentence is too long ({chars} characters). Keep it under {HELP_MAX_CHARS}.")));
    }
    sqlx::query("UPDATE schools SET help_sentence = $1 WHERE id = $2")
        .bind((!sentence.is_empty()).then(|| sentence.to_string()))
        .bind(school_id)
        .execute(db)
        .await?;
    Ok(())
}
