-- What the AI did, for the school's admin (`server::audit`): one row per
-- reply (who asked, which lesson, which model, tokens, the tools it ran and
-- what each changed), per refusal and per flag. Never the words of a
-- message: `detail` holds tool names, revisions, proposal ids and
-- categories. Kept `schools.keep_audit_days` (180 by default), then swept.
CREATE TABLE audit_events (
    id         TEXT PRIMARY KEY NOT NULL,
    school_id  TEXT NOT NULL,
    at         TEXT NOT NULL,
    -- 'reply', 'refusal' or 'flag'.
    action     TEXT NOT NULL,
    -- 'teacher', 'student' or 'automatic' (started by Margin for a teacher).
    actor      TEXT NOT NULL,
    -- The account it was for; NULL once that account is deleted.
    person_id  TEXT,
    lesson_id  TEXT,
    turn_id    TEXT,
    model      TEXT NOT NULL DEFAULT '',
    tokens     INTEGER NOT NULL DEFAULT 0,
    -- How it ended: 'complete', 'cancelled', 'error', or the refusal's or
    -- flag's own word.
    outcome    TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_school ON audit_events(school_id, at);
CREATE INDEX audit_events_person ON audit_events(person_id);

ALTER TABLE schools ADD COLUMN keep_audit_days INTEGER NOT NULL DEFAULT 180;
