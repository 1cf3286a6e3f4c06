-- Corrections of stored runs: every rename, edit of facts and deletion, with who did it and
-- when, kept after the run itself is gone (app/src/db/run_edit.rs). `run_public_id` and
-- `run_name` are copies, not references: a deleted run's entry outlives it. `detail` is a
-- JSON object: for an edit, each changed field's value before and after; for a deletion,
-- what the run held.
CREATE TABLE run_audit (
    id            INTEGER PRIMARY KEY,
    at            TEXT    NOT NULL,
    who           TEXT    NOT NULL,
    action        TEXT    NOT NULL CHECK (action IN ('edit', 'delete')),
    run_public_id TEXT    NOT NULL,
    run_name      TEXT    NOT NULL,
    detail        TEXT    NOT NULL
);

CREATE INDEX run_audit_at ON run_audit (at DESC, id DESC);
CREATE INDEX run_audit_run ON run_audit (run_public_id);
