-- How long a school keeps its chats, in days (NULL: until someone deletes
-- them, the default): students' chats with the tutor, and teachers' chats
-- with the assistant. The daily sweep (`ops::retention`) deletes a chat
-- whose last message is older.
ALTER TABLE schools ADD COLUMN keep_tutor_chats_days INTEGER;
ALTER TABLE schools ADD COLUMN keep_teacher_chats_days INTEGER;

-- Which instance swept on which day: the first to claim a day sweeps it,
-- the others do not.
CREATE TABLE sweeps (
    day        TEXT PRIMARY KEY NOT NULL,
    instance   TEXT NOT NULL,
    swept_at   TEXT NOT NULL
);
