-- Whoever runs the server (the operator) is not a school's admin: only an
-- operator grants credits or lets a school spend above the server's
-- allowance. Operators are named with `margin operators add <email>` on the
-- server's own command line, never by signing up.
CREATE TABLE operators (
    user_id  TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    added_at TEXT NOT NULL
);

-- What a running reply has reserved of its school's budget, on the reply's
-- own row: when a reply stops running without giving it back (its instance
-- died), any instance returns it to the school.
ALTER TABLE chat_messages ADD COLUMN reserved_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chat_messages ADD COLUMN reserved_school TEXT;
CREATE INDEX chat_messages_reserved ON chat_messages(turn_id) WHERE reserved_tokens > 0;

-- Shares inside a school: what each teacher, and each student (through the
-- tutor), may use in a month, set by the school's admin (NULL: no share of
-- its own; the school's budget alone). Each account counts its month; what
-- its replies under way hold is on the replies (`reserved_tokens`).
ALTER TABLE schools ADD COLUMN teacher_share INTEGER;
ALTER TABLE schools ADD COLUMN student_share INTEGER;
ALTER TABLE users ADD COLUMN usage_month TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN month_used INTEGER NOT NULL DEFAULT 0;
