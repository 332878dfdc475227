-- The schema of SQLite's migrations 0001 to 0007 in one, for PostgreSQL.
-- Later changes get a file in each folder. Timestamps are text in the same
-- form on both (`2026-11-24T08:30:07.123Z`), so they sort and compare alike;
-- the server writes them (`server::db::time`), the defaults here are a
-- fallback. Flags are BOOLEAN here and 0/1 in SQLite (`server::db::Flag`
-- reads both).

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);
-- Emails are unique whatever their case, as with SQLite's NOCASE.
CREATE UNIQUE INDEX users_email_lower ON users(lower(email));

-- Only a SHA-256 hash of each session token is stored.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE lessons (
    id           TEXT PRIMARY KEY NOT NULL,
    owner_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    document_xml TEXT NOT NULL,
    revision     BIGINT NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    updated_at   TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    review_edits BOOLEAN NOT NULL DEFAULT FALSE,
    deleted_at   TEXT,
    search_text  TEXT
);
CREATE INDEX lessons_owner ON lessons(owner_id, updated_at);
CREATE INDEX lessons_trash ON lessons(owner_id, deleted_at);

-- Every write of a lesson is a revision; `lessons.revision` names the latest.
CREATE TABLE lesson_revisions (
    lesson_id    TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    number       BIGINT NOT NULL,
    document_xml TEXT NOT NULL,
    author       TEXT NOT NULL CHECK (author IN ('teacher', 'agent')),
    summary      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    reviewed     BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (lesson_id, number)
);

CREATE TABLE chat_sessions (
    id         TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    updated_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);
CREATE INDEX chat_sessions_lesson ON chat_sessions(owner_id, lesson_id, updated_at);

CREATE TABLE chat_messages (
    id                TEXT PRIMARY KEY NOT NULL,
    session_id        TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    seq               BIGINT NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content           TEXT NOT NULL DEFAULT '',
    tool_calls        TEXT NOT NULL DEFAULT '[]',
    document_xml      TEXT,
    status            TEXT NOT NULL CHECK (status IN ('running', 'complete', 'error', 'interrupted', 'cancelled')),
    error_code        TEXT,
    error_message     TEXT,
    model             TEXT,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    total_tokens      BIGINT NOT NULL DEFAULT 0,
    turn_id           TEXT UNIQUE,
    created_at        TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    reasoning         TEXT NOT NULL DEFAULT '',
    UNIQUE (session_id, seq)
);
CREATE INDEX chat_messages_running ON chat_messages(status) WHERE status = 'running';

CREATE TABLE proposals (
    id               TEXT PRIMARY KEY NOT NULL,
    lesson_id        TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    owner_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    message_id       TEXT REFERENCES chat_messages(id) ON DELETE SET NULL,
    base_revision    BIGINT NOT NULL,
    document_xml     TEXT NOT NULL,
    summary          TEXT NOT NULL,
    changes          TEXT NOT NULL DEFAULT '[]',
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'applied', 'discarded', 'replaced')),
    reason           TEXT,
    applied_revision BIGINT,
    created_at       TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    decided_at       TEXT
);
CREATE INDEX proposals_lesson ON proposals(lesson_id, status);
CREATE INDEX proposals_message ON proposals(message_id);
-- At most one proposal per lesson waits for the teacher.
CREATE UNIQUE INDEX proposals_one_pending ON proposals(lesson_id) WHERE status = 'pending';
