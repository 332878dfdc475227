-- SQLite's 0011: import problems kept briefly for the page after the import.
CREATE TABLE import_reports (
    token      TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    report     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX import_reports_age ON import_reports(created_at);
