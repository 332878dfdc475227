-- What went wrong with a lesson file a teacher tried to import, kept ten
-- minutes for the page the import redirects to (which another instance may
-- serve). `report` is the JSON of `models::ImportReport`.
CREATE TABLE import_reports (
    token      TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    report     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX import_reports_age ON import_reports(created_at);
