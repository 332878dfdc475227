-- The assistant reacting to what happens (see the SQLite migration of the
-- same name).
ALTER TABLE chat_messages ADD COLUMN attachments TEXT;
ALTER TABLE users ADD COLUMN react_to_events BOOLEAN NOT NULL DEFAULT TRUE;

CREATE TABLE lesson_event_gates (
    lesson_id     TEXT PRIMARY KEY NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    due_ms        BIGINT,
    last_fired_ms BIGINT
);

CREATE TABLE lesson_pending_events (
    seq        BIGSERIAL PRIMARY KEY,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    chat_id    TEXT,
    intent     TEXT NOT NULL,
    note       TEXT NOT NULL,
    detail     TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    batch      TEXT
);
CREATE INDEX lesson_pending_events_lesson ON lesson_pending_events(lesson_id, batch);
