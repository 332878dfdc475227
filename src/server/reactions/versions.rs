//! A lesson's change reaching its versions: the lesson announces it
//! (`lessons::announce`), and each version whose base is older is queued at
//! its own gate for one automatic turn, which `carry` words when it starts.

use futures::future::BoxFuture;

use crate::server::{error::Result, lessons::announce::ChangeListener, state::AppState};

/// What hears what a lesson announces (`lessons::announce`): its changes,
/// for its versions; its creation and openings, for the assistant's
/// greetings (`sessions`). Handed to the state where it is made.
pub struct Listener;

impl ChangeListener<AppState> for Listener {
    fn changed<'a>(&'a self, state: &'a AppState, lesson_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // The edit itself is stored; a version's turn not queued is not
            // the editor's error, so it is said in the log.
            if let Err(e) = core_changed(state, lesson_id).await {
                tracing::warn!(error = %e, lesson = %lesson_id, "could not tell a lesson's versions that it changed");
            }
        })
    }

    fn created<'a>(&'a self, state: &'a AppState, owner_id: &'a str, lesson_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = super::sessions::created(state, owner_id, lesson_id).await {
                tracing::warn!(error = %e, lesson = %lesson_id, "could not tell the assistant of a new lesson");
            }
        })
    }

    fn opened<'a>(&'a self, state: &'a AppState, user_id: &'a str, lesson_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = super::sessions::opened(state, user_id, lesson_id, None).await {
                tracing::warn!(error = %e, lesson = %lesson_id, "could not tell the assistant a lesson was opened");
            }
        })
    }
}

/// `lesson_id` changed: each of its versions whose base is older waits at
/// its gate for one turn carrying the change (a version already waiting is
/// only pushed back, so that a burst is gathered). One indexed query when
/// the lesson has no versions.
async fn core_changed(state: &AppState, lesson_id: &str) -> Result<()> {
    let versions: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT v.id, v.owner_id,
                (SELECT COUNT(*) FROM lesson_pending_events e WHERE e.lesson_id = v.id AND e.intent = 'coreChanged' AND e.batch IS NULL)
         FROM lessons v JOIN lessons c ON c.id = v.version_of
         WHERE v.version_of = $1 AND v.deleted_at IS NULL AND c.deleted_at IS NULL
           AND c.revision > COALESCE(v.version_base_revision, 0)",
    )
    .bind(lesson_id)
    .fetch_all(&state.db)
    .await?;
    for (version, owner, waiting) in versions {
        super::core_changed(state, &owner, &version, waiting > 0).await?;
    }
    Ok(())
}
