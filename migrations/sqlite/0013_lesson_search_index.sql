-- Full-text search over lessons (FTS5): each lesson's title and its words
-- without markup (`search_text`), kept in step by triggers on `lessons`, so
-- every write that changes either, by any code, keeps the index right.
-- unicode61 without stemming: teachers write in many languages, and a word
-- is matched by its beginning ("volcan" finds "volcanoes").
CREATE VIRTUAL TABLE lesson_search USING fts5(
    title, search_text,
    content = 'lessons', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER lesson_search_insert AFTER INSERT ON lessons BEGIN
    INSERT INTO lesson_search (rowid, title, search_text) VALUES (new.rowid, new.title, COALESCE(new.search_text, ''));
END;

CREATE TRIGGER lesson_search_delete AFTER DELETE ON lessons BEGIN
    INSERT INTO lesson_search (lesson_search, rowid, title, search_text) VALUES ('delete', old.rowid, old.title, COALESCE(old.search_text, ''));
END;

CREATE TRIGGER lesson_search_update AFTER UPDATE OF title, search_text ON lessons BEGIN
    INSERT INTO lesson_search (lesson_search, rowid, title, search_text) VALUES ('delete', old.rowid, old.title, COALESCE(old.search_text, ''));
    INSERT INTO lesson_search (rowid, title, search_text) VALUES (new.rowid, new.title, COALESCE(new.search_text, ''));
END;

INSERT INTO lesson_search (lesson_search) VALUES ('rebuild');
