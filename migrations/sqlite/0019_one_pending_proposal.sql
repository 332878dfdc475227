-- One pending proposal per lesson, as PostgreSQL has had since its first
-- schema (`proposals_one_pending`): the schema comparison test found SQLite
-- without it. A newer proposal replaces an older one, so a database holding
-- two pending proposals for one lesson keeps the newest pending and marks
-- the others replaced before the index is made.
UPDATE proposals SET status = 'replaced', decided_at = COALESCE(decided_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
 WHERE status = 'pending'
   AND EXISTS (SELECT 1 FROM proposals newer
                WHERE newer.lesson_id = proposals.lesson_id AND newer.status = 'pending'
                  AND (newer.created_at > proposals.created_at
                       OR (newer.created_at = proposals.created_at AND newer.id > proposals.id)));
CREATE UNIQUE INDEX proposals_one_pending ON proposals(lesson_id) WHERE status = 'pending';
