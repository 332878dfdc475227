-- A running reply belongs to the instance writing it, which renews its lease
-- every second; any instance marks a reply whose lease ran out as
-- interrupted. A stop asked of another instance is left here for the owner.
ALTER TABLE chat_messages ADD COLUMN instance_id TEXT;
ALTER TABLE chat_messages ADD COLUMN lease_until TEXT;
ALTER TABLE chat_messages ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
