-- SQLite's 0013: full-text search over lessons. The 'simple' configuration
-- (no stemming, any language), the title weighted above the text.
ALTER TABLE lessons ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', coalesce(title, '')), 'A') ||
    setweight(to_tsvector('simple', coalesce(search_text, '')), 'B')
) STORED;
CREATE INDEX lessons_search ON lessons USING GIN (search_vector);
