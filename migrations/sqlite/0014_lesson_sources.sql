-- A lesson's sources: material the teacher added (a worksheet, a chapter,
-- notes) as the text read from the file, for the assistant to build from.
-- The file itself is not kept: only its name, its size and its text.
CREATE TABLE lesson_sources (
    id         TEXT PRIMARY KEY NOT NULL,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    -- The order they were added in (files added together keep theirs).
    seq        INTEGER NOT NULL,
    name       TEXT NOT NULL,
    -- The file's size in bytes, and its text's length in characters.
    size       INTEGER NOT NULL,
    chars      INTEGER NOT NULL,
    -- The text's first line or two, for the list and the assistant's prompt.
    opening    TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX lesson_sources_lesson ON lesson_sources(lesson_id, seq);
