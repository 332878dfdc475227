-- Assistant: what a reasoning model thought before (and between) its
-- replies, shown in the sidebar's "Thinking" section. Never sent back to the
-- model in later turns.
ALTER TABLE chat_messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
