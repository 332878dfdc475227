-- Teachers, their sign-in sessions, their lessons and every saved version of a lesson.

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Only a SHA-256 hash of each session token is stored: a copy of the database
-- does not let anyone sign in as a teacher.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE lessons (
    id           TEXT PRIMARY KEY NOT NULL,
    owner_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    document_xml TEXT NOT NULL,
    revision     INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX lessons_owner ON lessons(owner_id, updated_at);

-- Every write of a lesson is a revision; `lessons.revision` names the latest.
CREATE TABLE lesson_revisions (
    lesson_id    TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    number       INTEGER NOT NULL,
    document_xml TEXT NOT NULL,
    author       TEXT NOT NULL CHECK (author IN ('teacher', 'agent')),
    summary      TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (lesson_id, number)
);
