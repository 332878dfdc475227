-- A running turn's events, in batches, for readers on other instances (a
-- second tab, a reconnect that the load balancer sent elsewhere): each row
-- holds events up to `last_seq`, numbered as the turn numbered them.
-- Kept ten minutes after they are written.
CREATE TABLE turn_events (
    turn_id    TEXT NOT NULL,
    last_seq   INTEGER NOT NULL,
    entries    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (turn_id, last_seq)
);
CREATE INDEX turn_events_age ON turn_events(created_at);
