-- Signing in with a school's accounts (OpenID Connect).
--
-- A sign-in under way: the state it was started with (hashed; the browser
-- holds the state in a cookie), the nonce the ID token must carry and the
-- PKCE verifier, for ten minutes and one use.
CREATE TABLE sso_logins (
    state_hash    TEXT PRIMARY KEY NOT NULL,
    provider      TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    pkce_verifier TEXT NOT NULL,
    redirect_uri  TEXT NOT NULL,
    next_path     TEXT NOT NULL,
    join_code     TEXT,
    link_user_id  TEXT REFERENCES users(id) ON DELETE CASCADE,
    expires_at    TEXT NOT NULL
);

-- A school account linked to a Margin account: the provider's issuer and
-- its subject name the person; email and tenant as the provider last said.
CREATE TABLE user_identities (
    issuer         TEXT NOT NULL,
    subject        TEXT NOT NULL,
    provider       TEXT NOT NULL,
    user_id        TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email          TEXT,
    email_verified BOOLEAN NOT NULL DEFAULT FALSE,
    tenant         TEXT,
    linked_at      TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities(user_id);

-- Which school a new sign-in lands in: people of a domain (of a confirmed
-- email) or of a provider's tenant. One school per domain or tenant.
CREATE TABLE school_sso (
    provider   TEXT NOT NULL,
    kind       TEXT NOT NULL,
    value      TEXT NOT NULL,
    school_id  TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
    created_by TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (provider, kind, value)
);
CREATE INDEX school_sso_school ON school_sso(school_id);
