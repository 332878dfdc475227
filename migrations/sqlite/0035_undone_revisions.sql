-- An undo is a version of its own; it now says which version it undid, so
-- that the reply whose edit it took back says "Undone" for good (after a
-- reload too) and a second undo of the same version is refused.
ALTER TABLE lesson_revisions ADD COLUMN undoes BIGINT;
