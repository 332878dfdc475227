-- SQLite's 0010: rate limits shared by every instance.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY NOT NULL,
    tat BIGINT NOT NULL,
    ok  BIGINT NOT NULL DEFAULT 1
);
