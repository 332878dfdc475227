-- How the assistant's edits reach a lesson: 'auto' (as they come; one held
-- by the guard waits while the reply goes on), 'destructive' (the default:
-- one held by the guard pauses the reply until the teacher decides) or
-- 'every' (every edit is held and pauses the reply), which is what
-- `review_edits` on meant; `review_edits` stays, kept equal to 'every'.
ALTER TABLE lessons ADD COLUMN edit_mode TEXT NOT NULL DEFAULT 'destructive';
UPDATE lessons SET edit_mode = 'every' WHERE review_edits = 1;
