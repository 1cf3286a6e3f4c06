-- Issue #15: a level measured more than once (a sweep's `--repeat N`, or several imported
-- files of the same level) keeps every trial. The level's row in `points` holds the mean of
-- the trials; this table holds each trial as measured. `measures_json` is the trial's
-- statistics, `[{"metric", "stat", "value"}]` (names: app/src/domain/metrics.rs), written by
-- serde_json, whose shortest round-trip form reads back bit for bit.
CREATE TABLE point_trials (
    point_id        INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    trial           INTEGER NOT NULL CHECK (trial >= 0),
    requests_ok     INTEGER,
    requests_failed INTEGER,
    wall_s          REAL,
    measures_json   TEXT    NOT NULL,
    PRIMARY KEY (point_id, trial)
);
