//! Writing the audit log: one row an entry. A failure to write is logged
//! and never stops the reply or the refusal it records.

use crate::{
    chat::turn::TurnRecord,
    models::{AuditAction, AuditActor, AuditTool},
    server::{
        db::{time, Db},
        ids,
    },
};

/// An entry about to be kept.
pub struct NewEntry<'a> {
    pub school_id: &'a str,
    pub action: AuditAction,
    pub actor: AuditActor,
    pub person_id: &'a str,
    pub lesson_id: Option<&'a str>,
    pub turn_id: Option<&'a str>,
    pub model: &'a str,
    pub tokens: i64,
    pub outcome: &'a str,
    pub tools: Vec<AuditTool>,
}

/// Keeps `entry`; a failure is logged, not returned.
pub async fn record(db: &Db, entry: NewEntry<'_>) {
    let detail = serde_json::json!({ "tools": entry.tools }).to_string();
    let kept = sqlx::query(
        "INSERT INTO audit_events (id, school_id, at, action, actor, person_id, lesson_id, turn_id, model, tokens, outcome, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(ids::new_id())
    .bind(entry.school_id)
    .bind(time::now())
    .bind(entry.action.as_str())
    .bind(entry.actor.as_str())
    .bind(entry.person_id)
    .bind(entry.lesson_id)
    .bind(entry.turn_id)
    .bind(entry.model)
    .bind(entry.tokens)
    .bind(entry.outcome)
    .bind(detail)
    .execute(db)
    .await;
    if let Err(e) = kept {
        tracing::error!(error = %e, action = entry.action.as_str(), "could not keep an audit entry");
    }
}

/// The tools a reply ran, as the log keeps them: what each changed (a
/// revision, a proposal), never what it read or said. A call of a tool
/// not in `allowed` was refused.
pub fn tools_of(record: &TurnRecord, allowed: &[&str]) -> Vec<AuditTool> {
    record
        .tool_calls
        .iter()
        .map(|c| AuditTool {
            tool: c.call.tool.clone(),
            status: c.status.as_str().to_string(),
            revision: c.revision,
            proposal: c.proposal.as_ref().map(|p| p.id.clone()),
            decision: None,
            applied_revision: None,
            refused: !allowed.contains(&c.call.tool.as_str()),
        })
        .collect()
}
