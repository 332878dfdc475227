//! The one statement that records a teacher's decision on a proposal, shared
//! by saving an applied one (`lessons::save_reviewed`, in its own
//! transaction) and by discarding (`proposals::discard`). It stands apart
//! so that saving a lesson does not reach into the proposals that save
//! lessons.

use crate::{
    chat::proposal::ProposalStatus,
    server::{db, error::Result},
};

/// Marks a pending proposal decided, once, on `conn` (Apply's own
/// transaction, or any connection for Discard): false when it was decided
/// meanwhile (another click, another tab).
pub async fn decide(conn: &mut sqlx::AnyConnection, owner_id: &str, id: &str, status: ProposalStatus, reason: Option<String>) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE proposals SET status = $1, reason = $2, decided_at = $5
         WHERE id = $3 AND owner_id = $4 AND status = 'pending'",
    )
    .bind(status.as_str())
    .bind(reason)
    .bind(id)
    .bind(owner_id)
    .bind(db::time::now())
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}
