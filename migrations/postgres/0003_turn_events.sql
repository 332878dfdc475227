-- SQLite's 0009: a running turn's events, in batches, for readers on other instances.
CREATE TABLE turn_events (
    turn_id    TEXT NOT NULL,
    last_seq   BIGINT NOT NULL,
    entries    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (turn_id, last_seq)
);
CREATE INDEX turn_events_age ON turn_events(created_at);
