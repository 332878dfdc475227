-- A lesson its teacher shared with their school: colleagues find it in the
-- School library, open it to read and copy it into their own lessons.
-- `shared_at` is when (NULL: not shared); subject and grade are what the
-- teacher said when sharing, for the library's filters.
ALTER TABLE lessons ADD COLUMN shared_at TEXT;
ALTER TABLE lessons ADD COLUMN shared_subject TEXT;
ALTER TABLE lessons ADD COLUMN shared_grade TEXT;
CREATE INDEX lessons_shared ON lessons(shared_at) WHERE shared_at IS NOT NULL;
