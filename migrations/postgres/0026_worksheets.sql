-- A worksheet handed to students carries no answers, only a reference to
-- the lesson it was made from, kept here: the teacher who made it (or
-- anyone who may edit that lesson) imports it back as the whole lesson;
-- anyone else gets what the worksheet shows. The reference is unguessable
-- and opens nothing by itself: each import checks the importer's rights.
-- The lesson is kept as it was (revisions between are thinned).
CREATE TABLE worksheets (
    token        TEXT PRIMARY KEY,
    lesson_id    TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    revision     BIGINT NOT NULL,
    document_xml TEXT NOT NULL,
    made_at      TEXT NOT NULL,
    UNIQUE (lesson_id, revision)
);
