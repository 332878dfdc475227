-- What each account keeps, counted as it is written: its lessons'
-- versions and material, and (for a student) their answers. The limits are
-- the server's (`MARGIN_STORAGE_MB`, `MARGIN_STUDENT_STORAGE_MB`), written
-- into `storage_quotas` when it starts; a write that would take an account
-- past its limit is refused here, whichever part of the server makes it,
-- with 'margin_storage_full', which the server words for the teacher.
ALTER TABLE users ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;

CREATE TABLE storage_quotas (
    kind  TEXT PRIMARY KEY NOT NULL CHECK (kind IN ('teacher', 'student')),
    bytes INTEGER NOT NULL
);

UPDATE users SET stored_bytes =
      COALESCE((SELECT SUM(length(CAST(r.document_xml AS BLOB))) FROM lesson_revisions r JOIN lessons l ON l.id = r.lesson_id WHERE l.owner_id = users.id), 0)
    + COALESCE((SELECT SUM(length(CAST(s.text AS BLOB))) FROM lesson_sources s JOIN lessons l ON l.id = s.lesson_id WHERE l.owner_id = users.id), 0)
    + COALESCE((SELECT SUM(length(CAST(a.value AS BLOB))) FROM student_answers a WHERE a.student_id = users.id), 0);

CREATE TRIGGER storage_revision_in AFTER INSERT ON lesson_revisions BEGIN
    UPDATE users SET stored_bytes = stored_bytes + length(CAST(NEW.document_xml AS BLOB))
     WHERE id = (SELECT owner_id FROM lessons WHERE id = NEW.lesson_id);
    SELECT RAISE(ABORT, 'margin_storage_full')
      FROM lessons l JOIN users u ON u.id = l.owner_id
      JOIN storage_quotas q ON q.kind = (CASE WHEN u.role = 'student' THEN 'student' ELSE 'teacher' END)
     WHERE l.id = NEW.lesson_id AND u.stored_bytes > q.bytes;
END;

CREATE TRIGGER storage_revision_out AFTER DELETE ON lesson_revisions BEGIN
    UPDATE users SET stored_bytes = stored_bytes - length(CAST(OLD.document_xml AS BLOB))
     WHERE id = (SELECT owner_id FROM lessons WHERE id = OLD.lesson_id);
END;

CREATE TRIGGER storage_source_in AFTER INSERT ON lesson_sources BEGIN
    UPDATE users SET stored_bytes = stored_bytes + length(CAST(NEW.text AS BLOB))
     WHERE id = (SELECT owner_id FROM lessons WHERE id = NEW.lesson_id);
    SELECT RAISE(ABORT, 'margin_storage_full')
      FROM lessons l JOIN users u ON u.id = l.owner_id
      JOIN storage_quotas q ON q.kind = (CASE WHEN u.role = 'student' THEN 'student' ELSE 'teacher' END)
     WHERE l.id = NEW.lesson_id AND u.stored_bytes > q.bytes;
END;

CREATE TRIGGER storage_source_out AFTER DELETE ON lesson_sources BEGIN
    UPDATE users SET stored_bytes = stored_bytes - length(CAST(OLD.text AS BLOB))
     WHERE id = (SELECT owner_id FROM lessons WHERE id = OLD.lesson_id);
END;

CREATE TRIGGER storage_answer_in AFTER INSERT ON student_answers BEGIN
    UPDATE users SET stored_bytes = stored_bytes + length(CAST(NEW.value AS BLOB)) WHERE id = NEW.student_id;
    SELECT RAISE(ABORT, 'margin_storage_full')
      FROM users u JOIN storage_quotas q ON q.kind = (CASE WHEN u.role = 'student' THEN 'student' ELSE 'teacher' END)
     WHERE u.id = NEW.student_id AND u.stored_bytes > q.bytes;
END;

CREATE TRIGGER storage_answer_change AFTER UPDATE OF value ON student_answers BEGIN
    UPDATE users SET stored_bytes = stored_bytes - length(CAST(OLD.value AS BLOB)) + length(CAST(NEW.value AS BLOB))
     WHERE id = NEW.student_id;
    SELECT RAISE(ABORT, 'margin_storage_full')
      FROM users u JOIN storage_quotas q ON q.kind = (CASE WHEN u.role = 'student' THEN 'student' ELSE 'teacher' END)
     WHERE u.id = NEW.student_id AND u.stored_bytes > q.bytes
       AND length(CAST(NEW.value AS BLOB)) > length(CAST(OLD.value AS BLOB));
END;

CREATE TRIGGER storage_answer_out AFTER DELETE ON student_answers BEGIN
    UPDATE users SET stored_bytes = stored_bytes - length(CAST(OLD.value AS BLOB)) WHERE id = OLD.student_id;
END;

-- A lesson's versions and material go with it: deleted here, while the
-- lesson still names its owner, so the triggers above count them off.
CREATE TRIGGER storage_lesson_out BEFORE DELETE ON lessons BEGIN
    DELETE FROM lesson_revisions WHERE lesson_id = OLD.id;
    DELETE FROM lesson_sources WHERE lesson_id = OLD.id;
END;
