-- A reply paused on an edit held for the teacher keeps, while it waits,
-- what resuming it needs (the conversation as the model will be sent it,
-- the round's remaining calls, the time left): JSON written by the
-- instance running it. The row stays 'running' (so the chat stays busy and
-- the lease is renewed as before) and reads as 'awaiting'. When that
-- instance stops, the reply is not interrupted: any instance whose lease
-- tick finds it unheld adopts it and goes on from here.
ALTER TABLE chat_messages ADD COLUMN resume_state TEXT;
