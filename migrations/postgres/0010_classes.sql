-- SQLite's 0016. Students: classes a teacher hands lessons to, the students in them, the
-- revision of each lesson they see, and what they answered.
--
-- A class belongs to the teacher who made it. Its join code is what the
-- invitation link carries; renewing it replaces it, so the old one stops
-- working.
CREATE TABLE classes (
    id         TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    join_code  TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE INDEX classes_owner ON classes(owner_id, created_at);

CREATE TABLE class_members (
    class_id  TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    joined_at TEXT NOT NULL,
    PRIMARY KEY (class_id, user_id)
);
CREATE INDEX class_members_user ON class_members(user_id);

CREATE TABLE class_lessons (
    class_id  TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
    lesson_id TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    added_at  TEXT NOT NULL,
    PRIMARY KEY (class_id, lesson_id)
);
CREATE INDEX class_lessons_lesson ON class_lessons(lesson_id);

-- The revision students see; NULL while the lesson is not published.
ALTER TABLE lessons ADD COLUMN published_revision BIGINT;

-- One row per answered item (a blank, a question, a statement, a sequence,
-- a writing area). `version` is the sheet's version when the item last
-- changed: a save that has not seen it cannot overwrite it silently.
CREATE TABLE student_answers (
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    student_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    item_id    TEXT NOT NULL,
    value      TEXT NOT NULL,
    version    BIGINT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (lesson_id, student_id, item_id)
);

-- A student's sheet for one lesson: its version (raised by every save that
-- changes something) and the last check of the answers.
CREATE TABLE student_sheets (
    lesson_id   TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    student_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    version     BIGINT NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL,
    checked_at  TEXT,
    right_count BIGINT,
    graded      BIGINT,
    marks       TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (lesson_id, student_id)
);

-- Calls of tools outside a role's set (a student's tutor asked to edit the
-- lesson, say): refused, and kept here for the teacher and the admin.
CREATE TABLE refused_tool_calls (
    id         TEXT PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL,
    lesson_id  TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    tool       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX refused_tool_calls_lesson ON refused_tool_calls(lesson_id, created_at);
