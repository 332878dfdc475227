-- Each LMS registration proves itself with a key of its own, so a platform
-- that trusts one registration's keys trusts no other's (a school could
-- otherwise ask another school's LMS for a token in its name). A key with a
-- platform_id belongs to that registration, published at
-- /lti/jwks/{platform_id}; a key without one is the server's shared key,
-- still used by registrations made before this change until their admin
-- gives them their own.
ALTER TABLE lti_tool_keys ADD COLUMN platform_id TEXT REFERENCES lti_platforms(id) ON DELETE CASCADE;
CREATE INDEX lti_tool_keys_platform ON lti_tool_keys(platform_id);

-- Other origins the platform's services answer at (a Canvas's own address,
-- while its keys and tokens come from Instructure's), one per line. The
-- roster and line-item addresses a launch names must be on one of the
-- registration's origins.
ALTER TABLE lti_platforms ADD COLUMN service_origins TEXT NOT NULL DEFAULT '';

-- A launch under way keeps what started it, so a browser whose LMS frame
-- could not keep Margin's cookie can start again in a window of its own.
ALTER TABLE lti_logins ADD COLUMN initiation TEXT NOT NULL DEFAULT '';

-- The email the platform gives for its person, as it last said: shown to
-- their teacher in the class, never used to find or name an account (the
-- account's own address is one that can receive nothing).
ALTER TABLE lti_users ADD COLUMN email TEXT;

-- A registration address a school's admin made for its LMS (LTI Dynamic
-- Registration): the token names the school, for a day and one use.
CREATE TABLE lti_registration_invites (
    token_hash TEXT PRIMARY KEY NOT NULL,
    school_id  TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL
);

-- The school's rule for people its linked school accounts bring in: a
-- sign-in whose confirmed email is at one of these domains (one per line,
-- e.g. students.lincoln.org) is a student's; anyone else waits for the
-- school's admin.
ALTER TABLE schools ADD COLUMN sso_student_domains TEXT NOT NULL DEFAULT '';
