-- "Tell the assistant when students get answers wrong": a teacher's
-- choice, off until they switch it on. And how many times each student
-- has checked their sheet, which the assistant is told with their wrong
-- answers (a first try reads differently from a fifth).
ALTER TABLE users ADD COLUMN tell_wrong_answers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE student_sheets ADD COLUMN checks INTEGER NOT NULL DEFAULT 0;
