-- Who may write: users, their browser sessions and API tokens.
-- Secrets are never stored: passwords as argon2id PHC strings, session cookies and API
-- tokens as the hex SHA-256 of the value handed out. Timestamps are RFC 3339 UTC text
-- with millisecond precision, so they compare and sort as text.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    -- `$argon2id$v=19$...`: the salt and the parameters are part of the string.
    password_hash TEXT    NOT NULL,
    created_at    TEXT    NOT NULL
);

CREATE TABLE sessions (
    -- SHA-256 (hex) of the `plateau_session` cookie value.
    token_hash TEXT    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT    NOT NULL,
    expires_at TEXT    NOT NULL
);

CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    -- What `plateau token list` shows and `plateau token revoke` takes; not the secret.
    public_id    TEXT    NOT NULL UNIQUE,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    label        TEXT    NOT NULL DEFAULT '',
    -- SHA-256 (hex) of the whole token, `plt_` prefix included.
    token_hash   TEXT    NOT NULL UNIQUE,
    created_at   TEXT    NOT NULL,
    last_used_at TEXT,
    -- Set once; a revoked token is refused from the next request on.
    revoked_at   TEXT
);
