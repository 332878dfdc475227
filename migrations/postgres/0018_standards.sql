-- Standards frameworks a school may tag lessons with (`standards="…"`),
-- read from 1EdTech CASE packages. `school_id` NULL: loaded from the
-- server's standards folder, offered to every school. Loading a framework
-- with the same CFDocument identifier again replaces it.
CREATE TABLE frameworks (
    id         TEXT PRIMARY KEY,
    school_id  TEXT REFERENCES schools(id) ON DELETE CASCADE,
    case_id    TEXT NOT NULL,
    title      TEXT NOT NULL,
    creator    TEXT NOT NULL,
    -- SHA-256 of the package loaded: the folder's unchanged files are not
    -- loaded again at each start.
    digest     TEXT NOT NULL,
    loaded_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX frameworks_case ON frameworks(COALESCE(school_id, ''), case_id);

-- A framework's coded statements: each code once per framework.
CREATE TABLE framework_items (
    framework_id TEXT NOT NULL REFERENCES frameworks(id) ON DELETE CASCADE,
    code         TEXT NOT NULL,
    statement    TEXT NOT NULL,
    PRIMARY KEY (framework_id, code)
);
