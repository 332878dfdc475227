-- How many rounds (model calls) a reply took: the `rounds` of the turn's
-- record (`done`'s `final`, the JSON turn API). Replies stored before it say 0.
ALTER TABLE chat_messages ADD COLUMN rounds BIGINT NOT NULL DEFAULT 0;
