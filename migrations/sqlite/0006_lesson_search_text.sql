-- A lesson's words without its markup, for search: kept in step with every
-- save. Lessons stored before this column are filled in at start-up.

ALTER TABLE lessons ADD COLUMN search_text TEXT;
