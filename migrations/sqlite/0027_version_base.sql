-- Where a version stands with its core: the core's XML and revision it was
-- made from or last took changes from. When the core changes past it, the
-- assistant is asked to carry the changes in between into the version (its
-- edits held for the teacher), and these move to the core as it then was.
-- Kept as XML, not only as a number, because the core's older revisions
-- may be thinned away.
ALTER TABLE lessons ADD COLUMN version_base_xml TEXT;
ALTER TABLE lessons ADD COLUMN version_base_revision INTEGER;
-- Versions made before this was kept start in step with their core as it is.
UPDATE lessons SET
  version_base_xml = (SELECT c.document_xml FROM lessons c WHERE c.id = lessons.version_of),
  version_base_revision = (SELECT c.revision FROM lessons c WHERE c.id = lessons.version_of)
WHERE version_of IS NOT NULL;
