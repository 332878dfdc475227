-- A lesson's sources: material the teacher added, as the text read from the
-- file (see the SQLite migration of the same name).
CREATE TABLE lesson_sources (
    id         TEXT PRIMARY KEY NOT NULL,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    name       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    chars      BIGINT NOT NULL,
    opening    TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);
CREATE INDEX lesson_sources_lesson ON lesson_sources(lesson_id, seq);
