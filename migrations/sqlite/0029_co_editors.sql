-- Colleagues who edit a lesson with its owner (invited by the owner, from
-- the same school). Only the owner shares, publishes, makes versions and
-- deletes; an editor opens, edits, chats with the assistant about it and
-- reviews what their own chats propose.
CREATE TABLE lesson_editors (
    lesson_id TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    added_at  TEXT NOT NULL,
    PRIMARY KEY (lesson_id, user_id)
);
CREATE INDEX lesson_editors_user ON lesson_editors(user_id);

-- Who made each version: the teacher who saved it, or the one whose chat
-- the assistant's edit came from. NULL (versions made before): the owner.
ALTER TABLE lesson_revisions ADD COLUMN author_id TEXT REFERENCES users(id) ON DELETE SET NULL;
