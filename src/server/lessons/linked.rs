//! The ids a lesson's linked lessons use: its core and the core's other
//! versions, or, for a core, its versions. Changes are carried from a core
//! into its versions by block id, so a block the teacher adds to a version
//! and one added to the core must never be given the same id: every save
//! (the teacher's, the assistant's) gives new blocks ids none of them uses
//! (`lesson::normalize_after`).

use std::collections::HashSet;

use crate::server::{db::Db, error::Result};

/// Every id used by the current documents of the lessons linked to `lesson_id`.
pub async fn linked_ids(db: &Db, lesson_id: &str) -> Result<HashSet<String>> {
    let docs: Vec<String> = sqlx::query_scalar(
        "SELECT l.document_xml FROM lessons l, lessons me
          WHERE me.id = $1 AND l.id <> me.id
            AND (l.id = me.version_of OR l.version_of = COALESCE(me.version_of, me.id))",
    )
    .bind(lesson_id)
    .fetch_all(db)
    .await?;
    let mut ids = HashSet::new();
    for doc in docs {
        if let Ok(root) = crate::lesson::parse(&doc) {
            ids.extend(crate::lesson::ids_of(&root));
        }
    }
    Ok(ids)
}
