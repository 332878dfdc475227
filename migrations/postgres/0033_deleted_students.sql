-- How many students who answered a lesson had their account deleted
-- (`ops::deletion`): their answers went with them, and the lesson's
-- results say so.
ALTER TABLE lessons ADD COLUMN deleted_students BIGINT NOT NULL DEFAULT 0;
