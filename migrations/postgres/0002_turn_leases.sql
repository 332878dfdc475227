-- SQLite's 0008: a running reply's instance and lease, and a stop asked of
-- another instance.
ALTER TABLE chat_messages ADD COLUMN instance_id TEXT;
ALTER TABLE chat_messages ADD COLUMN lease_until TEXT;
ALTER TABLE chat_messages ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;
