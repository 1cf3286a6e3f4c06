-- The sign-in throttle, moved from memory into the database so that every
-- process serving this database counts the same failures: one row per sign-in attempt
-- that took a slot (a failure, or a check still running), by normalised user name.
-- Rows older than the window are deleted as new attempts come. RFC 3339 UTC text.
CREATE TABLE login_attempts (
    id         INTEGER PRIMARY KEY,
    name_key   TEXT    NOT NULL,
    started_at TEXT    NOT NULL
);

CREATE INDEX login_attempts_name ON login_attempts (name_key, started_at);
CREATE INDEX login_attempts_started_at ON login_attempts (started_at);
