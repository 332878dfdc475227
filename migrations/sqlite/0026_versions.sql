-- A lesson made as a version of another (its core): for a reading level,
-- for English learners, or in another language. The version starts as a
-- copy of the core, so its exercises keep the core's ids. `version_label`
-- says which version it is ("grade 4", "English learners", "Spanish").
ALTER TABLE lessons ADD COLUMN version_of TEXT REFERENCES lessons(id) ON DELETE SET NULL;
ALTER TABLE lessons ADD COLUMN version_label TEXT;
CREATE INDEX lessons_versions ON lessons(version_of) WHERE version_of IS NOT NULL;
