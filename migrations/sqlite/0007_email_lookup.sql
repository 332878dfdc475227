-- Sign-in looks an account up by `lower(email)`, the one form both SQLite and
-- PostgreSQL understand (the column's NOCASE is SQLite's own).
CREATE INDEX users_email_lower ON users(lower(email));
