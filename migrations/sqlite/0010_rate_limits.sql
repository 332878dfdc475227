-- Rate limits shared by every instance (used when the database is shared):
-- one row per counted key, holding when its next try is due under GCRA
-- (`tat`, milliseconds) and whether the last try was let through.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY NOT NULL,
    tat INTEGER NOT NULL,
    ok  INTEGER NOT NULL DEFAULT 1
);
