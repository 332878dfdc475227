-- Review of the agent's edits. A lesson can ask for every edit to be
-- reviewed; an edit held for review is a proposal until the teacher applies
-- or discards it (destructive edits are always held). A revision made by
-- applying a proposal is the agent's, applied by the teacher (`reviewed`).

ALTER TABLE lessons ADD COLUMN review_edits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lesson_revisions ADD COLUMN reviewed INTEGER NOT NULL DEFAULT 0;

CREATE TABLE proposals (
    id               TEXT PRIMARY KEY NOT NULL,
    lesson_id        TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    owner_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- The reply whose step proposed it.
    message_id       TEXT REFERENCES chat_messages(id) ON DELETE SET NULL,
    -- The revision it was made on, and the whole lesson it would make.
    base_revision    INTEGER NOT NULL,
    document_xml     TEXT NOT NULL,
    summary          TEXT NOT NULL,
    -- JSON array of the changes from the base revision, in teachers' words.
    changes          TEXT NOT NULL DEFAULT '[]',
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'applied', 'discarded', 'replaced')),
    -- Why the teacher discarded it, if they said.
    reason           TEXT,
    applied_revision INTEGER,
    created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    decided_at       TEXT
);
CREATE INDEX proposals_lesson ON proposals(lesson_id, status);
CREATE INDEX proposals_message ON proposals(message_id);
