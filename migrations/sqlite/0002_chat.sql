-- Chat sessions (one teacher, one lesson) and their messages. An assistant
-- message is one turn of the agent: inserted as 'running' when the turn starts,
-- updated as it goes, and finished with its final status.

CREATE TABLE chat_sessions (
    id         TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX chat_sessions_lesson ON chat_sessions(owner_id, lesson_id, updated_at);

CREATE TABLE chat_messages (
    id                TEXT PRIMARY KEY NOT NULL,
    session_id        TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    -- Orders messages within a session.
    seq               INTEGER NOT NULL,
    role              TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    -- The user's text, or the assistant's reply text.
    content           TEXT NOT NULL DEFAULT '',
    -- Assistant: JSON array of the turn's tool calls.
    tool_calls        TEXT NOT NULL DEFAULT '[]',
    -- Assistant: the lesson after the turn's last successful edit.
    document_xml      TEXT,
    status            TEXT NOT NULL CHECK (status IN ('running', 'complete', 'error', 'interrupted', 'cancelled')),
    error_code        TEXT,
    error_message     TEXT,
    model             TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens      INTEGER NOT NULL DEFAULT 0,
    -- Assistant: the turn that wrote it (the id used by resume and cancel).
    turn_id           TEXT UNIQUE,
    created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (session_id, seq)
);
CREATE INDEX chat_messages_running ON chat_messages(status) WHERE status = 'running';
