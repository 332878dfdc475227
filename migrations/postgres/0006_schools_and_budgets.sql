-- SQLite's 0012: schools, their budgets, invitations, and usage per model call.
CREATE TABLE schools (
    id             TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL,
    created_at     TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    monthly_tokens BIGINT,
    credits        BIGINT NOT NULL DEFAULT 0,
    reserved       BIGINT NOT NULL DEFAULT 0,
    usage_month    TEXT NOT NULL DEFAULT '',
    month_used     BIGINT NOT NULL DEFAULT 0
);

ALTER TABLE users ADD COLUMN school_id TEXT REFERENCES schools(id);
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'teacher';
CREATE INDEX users_school ON users(school_id);

INSERT INTO schools (id, name) SELECT 'school-first', 'My school' WHERE EXISTS (SELECT 1 FROM users);
UPDATE users SET school_id = 'school-first';
UPDATE users SET role = 'admin' WHERE id = (SELECT id FROM users ORDER BY created_at, id LIMIT 1);

CREATE TABLE invites (
    id         TEXT PRIMARY KEY NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    school_id  TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT,
    used_by    TEXT
);
CREATE INDEX invites_school ON invites(school_id, created_at);

CREATE TABLE ai_calls (
    id                TEXT PRIMARY KEY NOT NULL,
    school_id         TEXT NOT NULL,
    user_id           TEXT NOT NULL,
    turn_id           TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    total_tokens      BIGINT NOT NULL,
    from_credits      BIGINT NOT NULL DEFAULT 0,
    estimated         BOOLEAN NOT NULL DEFAULT FALSE,
    outcome           TEXT NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE INDEX ai_calls_school ON ai_calls(school_id, created_at);
CREATE INDEX ai_calls_user ON ai_calls(user_id, created_at);

CREATE TABLE credit_grants (
    id         TEXT PRIMARY KEY NOT NULL,
    school_id  TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
    tokens     BIGINT NOT NULL,
    added_by   TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX credit_grants_school ON credit_grants(school_id, created_at);
