-- SQLite's 0018. What each account keeps, counted as it is written: its
-- lessons' versions and material, and (for a student) their answers. The
-- limits are the server's (`MARGIN_STORAGE_MB`, `MARGIN_STUDENT_STORAGE_MB`),
-- written into `storage_quotas` when it starts; a write that would take an
-- account past its limit is refused here, whichever part of the server
-- makes it, with 'margin_storage_full', which the server words for the teacher.
ALTER TABLE users ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0;

CREATE TABLE storage_quotas (
    kind  TEXT PRIMARY KEY NOT NULL CHECK (kind IN ('teacher', 'student')),
    bytes BIGINT NOT NULL
);

UPDATE users SET stored_bytes =
      COALESCE((SELECT SUM(octet_length(r.document_xml)) FROM lesson_revisions r JOIN lessons l ON l.id = r.lesson_id WHERE l.owner_id = users.id), 0)
    + COALESCE((SELECT SUM(octet_length(s.text)) FROM lesson_sources s JOIN lessons l ON l.id = s.lesson_id WHERE l.owner_id = users.id), 0)
    + COALESCE((SELECT SUM(octet_length(a.value)) FROM student_answers a WHERE a.student_id = users.id), 0);

-- Adds `delta` to the account's count; past its limit (when growing) the
-- write is refused.
CREATE FUNCTION margin_store(account TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    now_stored BIGINT;
    kind_of TEXT;
    limit_of BIGINT;
BEGIN
    IF account IS NULL OR delta = 0 THEN
        RETURN;
    END IF;
    UPDATE users SET stored_bytes = stored_bytes + delta WHERE id = account
      RETURNING stored_bytes, CASE WHEN role = 'student' THEN 'student' ELSE 'teacher' END INTO now_stored, kind_of;
    IF delta > 0 AND now_stored IS NOT NULL THEN
        SELECT bytes INTO limit_of FROM storage_quotas WHERE kind = kind_of;
        IF limit_of IS NOT NULL AND now_stored > limit_of THEN
            RAISE EXCEPTION 'margin_storage_full';
        END IF;
    END IF;
END $$;

CREATE FUNCTION margin_store_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM margin_store((SELECT owner_id FROM lessons WHERE id = NEW.lesson_id), octet_length(NEW.document_xml));
    ELSE
        PERFORM margin_store((SELECT owner_id FROM lessons WHERE id = OLD.lesson_id), -octet_length(OLD.document_xml));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER storage_revision AFTER INSERT OR DELETE ON lesson_revisions FOR EACH ROW EXECUTE FUNCTION margin_store_revision();

CREATE FUNCTION margin_store_source() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM margin_store((SELECT owner_id FROM lessons WHERE id = NEW.lesson_id), octet_length(NEW.text));
    ELSE
        PERFORM margin_store((SELECT owner_id FROM lessons WHERE id = OLD.lesson_id), -octet_length(OLD.text));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER storage_source AFTER INSERT OR DELETE ON lesson_sources FOR EACH ROW EXECUTE FUNCTION margin_store_source();

CREATE FUNCTION margin_store_answer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM margin_store(NEW.student_id, octet_length(NEW.value));
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM margin_store(NEW.student_id, octet_length(NEW.value) - octet_length(OLD.value));
    ELSE
        PERFORM margin_store(OLD.student_id, -octet_length(OLD.value));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER storage_answer AFTER INSERT OR UPDATE OF value OR DELETE ON student_answers FOR EACH ROW EXECUTE FUNCTION margin_store_answer();

-- A lesson's versions and material go with it: deleted here, while the
-- lesson still names its owner, so the triggers above count them off.
CREATE FUNCTION margin_store_lesson_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lesson_revisions WHERE lesson_id = OLD.id;
    DELETE FROM lesson_sources WHERE lesson_id = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER storage_lesson_gone BEFORE DELETE ON lessons FOR EACH ROW EXECUTE FUNCTION margin_store_lesson_gone();
