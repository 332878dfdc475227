-- Schools: every account belongs to one, and a school's AI use is metered
-- (issue #21). The month's spending lives on the school's own row beside its
-- credits and what running calls have reserved, so that checking and
-- reserving budget is one conditional UPDATE of one row on both backends.
CREATE TABLE schools (
    id             TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    -- Tokens a calendar month: NULL follows MARGIN_MONTHLY_TOKENS, a
    -- negative number is unlimited.
    monthly_tokens INTEGER,
    -- Bought or granted tokens; they do not expire.
    credits        INTEGER NOT NULL DEFAULT 0,
    -- Held by model calls under way (released when each settles).
    reserved       INTEGER NOT NULL DEFAULT 0,
    -- The month `month_used` counts ('2026-11'); another month reads as 0.
    usage_month    TEXT NOT NULL DEFAULT '',
    -- Tokens of that month taken from the allowance.
    month_used     INTEGER NOT NULL DEFAULT 0
);

ALTER TABLE users ADD COLUMN school_id TEXT REFERENCES schools(id);
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'teacher';
CREATE INDEX users_school ON users(school_id);

-- What was there before becomes one school, run by its oldest account.
INSERT INTO schools (id, name) SELECT 'school-first', 'My school' WHERE EXISTS (SELECT 1 FROM users);
UPDATE users SET school_id = 'school-first';
UPDATE users SET role = 'admin' WHERE id = (SELECT id FROM users ORDER BY created_at, id LIMIT 1);

-- Single-use invitations to join a school as a teacher. Only a hash of the
-- link's token is stored.
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

-- One row per model call: what it used and who for. Kept for the usage
-- reports, whatever becomes of the turn, the chat or the account.
CREATE TABLE ai_calls (
    id                TEXT PRIMARY KEY NOT NULL,
    school_id         TEXT NOT NULL,
    user_id           TEXT NOT NULL,
    turn_id           TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_tokens      INTEGER NOT NULL,
    from_credits      INTEGER NOT NULL DEFAULT 0,
    -- The provider did not report usage (the call was cut short): counted
    -- from what was sent and received.
    estimated         INTEGER NOT NULL DEFAULT 0,
    outcome           TEXT NOT NULL,
    created_at        TEXT NOT NULL
);
CREATE INDEX ai_calls_school ON ai_calls(school_id, created_at);
CREATE INDEX ai_calls_user ON ai_calls(user_id, created_at);

-- Credits added, by whom (NULL: the command line), for the school page.
CREATE TABLE credit_grants (
    id         TEXT PRIMARY KEY NOT NULL,
    school_id  TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
    tokens     INTEGER NOT NULL,
    added_by   TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX credit_grants_school ON credit_grants(school_id, created_at);
