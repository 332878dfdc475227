-- A deleted lesson goes to the trash: it keeps its revisions and chats, is
-- hidden everywhere but the trash, and is purged 30 days after `deleted_at`.

ALTER TABLE lessons ADD COLUMN deleted_at TEXT;
CREATE INDEX lessons_trash ON lessons(owner_id, deleted_at);
