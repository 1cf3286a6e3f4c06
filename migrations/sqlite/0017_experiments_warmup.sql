-- A trial flagged as warm-up (a cold start: the first repeat of a level, far from the
-- others) is kept but left out of its level's statistics.
ALTER TABLE point_trials ADD COLUMN warmup BOOLEAN NOT NULL DEFAULT 0;

-- An experiment: the runs one import of a sweep folder or archive created (one per setting
-- under test), kept together so they open as one comparison.
CREATE TABLE experiments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    public_id  TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE experiment_runs (
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL CHECK (position >= 0),
    PRIMARY KEY (experiment_id, run_id)
);
CREATE INDEX experiment_runs_by_run ON experiment_runs (run_id);
