-- How much the tutor helps on a lesson: 'full', 'hints' or 'off'
-- (`models::TutorPolicy`), set by its teacher when publishing.
ALTER TABLE lessons ADD COLUMN tutor_policy TEXT NOT NULL DEFAULT 'full';

-- The sentence the tutor adds when a student may be at risk: who to talk
-- to at this school (NULL: the server's own sentence).
ALTER TABLE schools ADD COLUMN help_sentence TEXT;

-- What a student's conversation with the tutor raised for their teachers
-- (`server::safety`): never deleted, only acknowledged. The excerpt is a
-- student's data, seen only by the class's teachers and the school's admin.
CREATE TABLE safety_flags (
    id              TEXT PRIMARY KEY NOT NULL,
    school_id       TEXT NOT NULL,
    student_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    lesson_id       TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    chat_id         TEXT NOT NULL,
    -- 'harm', 'abuse', 'personal' or 'misuse'.
    category        TEXT NOT NULL,
    excerpt         TEXT NOT NULL,
    -- Whether the student wrote it (else the tutor's reply did).
    from_student    BOOLEAN NOT NULL,
    created_at      TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT
);
CREATE INDEX safety_flags_school ON safety_flags (school_id, acknowledged_at);
CREATE INDEX safety_flags_lesson ON safety_flags (lesson_id, student_id);
