-- When each teacher's last working session on a lesson began (on the
-- reaction clock, in milliseconds): creating a lesson begins one, and
-- opening it begins another once the last is old enough, which the
-- assistant may greet (`sessionStart`, `reactions::sessions`).
CREATE TABLE lesson_sessions (
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    lesson_id  TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    started_ms BIGINT NOT NULL,
    PRIMARY KEY (owner_id, lesson_id)
);
