-- Margin as an LTI 1.3 tool inside a school's LMS (Canvas, Moodle,
-- Schoology…).
--
-- A platform a school's admin registered: who signs its launches (issuer,
-- and its keys at jwks_url), what it calls Margin (client_id), where a
-- launch starts (login_url, its OIDC authorization endpoint) and where
-- Margin asks for access tokens (token_url).
CREATE TABLE lti_platforms (
    id         TEXT PRIMARY KEY NOT NULL,
    school_id  TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    issuer     TEXT NOT NULL,
    client_id  TEXT NOT NULL,
    login_url  TEXT NOT NULL,
    token_url  TEXT NOT NULL,
    jwks_url   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (issuer, client_id)
);
CREATE INDEX lti_platforms_school ON lti_platforms(school_id);

-- The deployments of Margin on a platform that may launch it.
CREATE TABLE lti_deployments (
    platform_id   TEXT NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    deployment_id TEXT NOT NULL,
    PRIMARY KEY (platform_id, deployment_id)
);

-- A launch under way: the state and nonce Margin sent, for ten minutes and
-- one use (a replayed launch finds nothing).
CREATE TABLE lti_logins (
    state_hash  TEXT PRIMARY KEY NOT NULL,
    platform_id TEXT NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    nonce       TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);

-- The platform's people as Margin accounts.
CREATE TABLE lti_users (
    platform_id TEXT NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    subject     TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (platform_id, subject)
);
CREATE INDEX lti_users_user ON lti_users(user_id);

-- A course on the platform as a Margin class.
CREATE TABLE lti_contexts (
    platform_id TEXT NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    context_id  TEXT NOT NULL,
    class_id    TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
    -- Where the course's roster is read (Names and Role Provisioning).
    memberships_url TEXT,
    PRIMARY KEY (platform_id, context_id)
);

-- Margin's own keys as a tool: the newest signs (Deep Linking answers);
-- each is published at /lti/jwks until a day after a newer one replaced it.
CREATE TABLE lti_tool_keys (
    kid         TEXT PRIMARY KEY NOT NULL,
    private_pem TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    retired_at  TEXT
);

-- A teacher choosing a lesson for their LMS (Deep Linking): where the
-- answer goes, and what the platform asked to have back, for an hour.
CREATE TABLE lti_deep_links (
    id            TEXT PRIMARY KEY NOT NULL,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    platform_id   TEXT NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    deployment_id TEXT NOT NULL,
    return_url    TEXT NOT NULL,
    data          TEXT,
    expires_at    TEXT NOT NULL
);

-- Where a lesson's scores go on a platform (Assignment and Grade Services):
-- the line item a launch of the lesson named, with the scopes the platform
-- granted. A student's "Check answers" posts their score to each.
CREATE TABLE lti_line_items (
    platform_id TEXT NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    lesson_id   TEXT NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
    line_item   TEXT NOT NULL,
    PRIMARY KEY (platform_id, lesson_id, line_item)
);
CREATE INDEX lti_line_items_lesson ON lti_line_items(lesson_id);
