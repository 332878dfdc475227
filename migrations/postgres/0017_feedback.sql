-- Feedback on students' open answers (short answers, writing). The
-- assistant drafts (`draft`, `draft_points`, with the answer it read); the
-- teacher approves (`feedback`, `points`), edits then approves, or
-- discards. Only the approved columns are ever read for a student.
CREATE TABLE answer_feedback (
    lesson_id    TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    student_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    item_id      TEXT NOT NULL,
    draft        TEXT,
    draft_points BIGINT,
    draft_answer TEXT,
    drafted_at   TEXT,
    feedback     TEXT,
    points       BIGINT,
    max_points   BIGINT,
    approved_at  TEXT,
    PRIMARY KEY (lesson_id, student_id, item_id)
);
CREATE INDEX answer_feedback_drafts ON answer_feedback(lesson_id) WHERE draft IS NOT NULL;

-- When the student last opened the lesson after feedback arrived: newer
-- feedback is announced on their lesson page.
ALTER TABLE student_sheets ADD COLUMN feedback_seen_at TEXT;
