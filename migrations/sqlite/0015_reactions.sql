-- The assistant reacting to what happens (material added, a lesson created,
-- …) rather than only to what was typed.
--
-- A message's attachments, as JSON: the note of what started an automatic
-- turn (`trigger`), or the lesson text a teacher asked about
-- (`selectedText`). NULL for most messages.
ALTER TABLE chat_messages ADD COLUMN attachments TEXT;

-- "Let the assistant react to new material": on unless the teacher says no.
ALTER TABLE users ADD COLUMN react_to_events INTEGER NOT NULL DEFAULT 1;

-- One gate per lesson, shared by every instance: when the lesson's pending
-- events are due (a burst is gathered for a while, and automatic turns are
-- spaced out) and when one last started a turn. Times are milliseconds on
-- the server's reaction clock. Claiming the gate is one conditional UPDATE,
-- so two tabs or two instances cannot both start a turn for one burst.
CREATE TABLE lesson_event_gates (
    lesson_id     TEXT PRIMARY KEY NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    due_ms        INTEGER,
    last_fired_ms INTEGER
);

-- What happened and is waiting for the next automatic turn. `batch` is set
-- when a turn takes it.
CREATE TABLE lesson_pending_events (
    -- The order they happened in.
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    chat_id    TEXT,
    intent     TEXT NOT NULL,
    -- What the teacher is shown ("You added Chapter 5.pdf") and what the
    -- model is told about it.
    note       TEXT NOT NULL,
    detail     TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    batch      TEXT
);
CREATE INDEX lesson_pending_events_lesson ON lesson_pending_events(lesson_id, batch);
