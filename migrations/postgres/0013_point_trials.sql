-- PostgreSQL twin of migrations/sqlite/0013: every trial of a level measured more than
-- once. JSON kept as text (not jsonb): numbers read back digit for digit.
CREATE TABLE point_trials (
    point_id        BIGINT NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    trial           BIGINT NOT NULL CHECK (trial >= 0),
    requests_ok     BIGINT,
    requests_failed BIGINT,
    wall_s          DOUBLE PRECISION,
    measures_json   TEXT   NOT NULL,
    PRIMARY KEY (point_id, trial)
);
