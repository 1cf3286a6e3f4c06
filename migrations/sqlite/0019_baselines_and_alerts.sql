-- An annotation can say "expected change: new baseline": the regression gate and the
-- history's limits then compare later runs of the configuration with the runs from this
-- one on only.
ALTER TABLE annotations ADD COLUMN new_baseline BOOLEAN NOT NULL DEFAULT 0;

-- Alerts sent to the webhooks given at start-up: one row per alert and endpoint, its
-- delivery attempts and outcome. The endpoint is kept as its origin only (a webhook's
-- path is often its secret).
CREATE TABLE alert_deliveries (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    alert_key   TEXT    NOT NULL,
    endpoint    TEXT    NOT NULL,
    summary     TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts    INTEGER NOT NULL CHECK (attempts >= 0),
    last_error  TEXT,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
);
CREATE INDEX alert_deliveries_by_run ON alert_deliveries (run_id, id);
CREATE INDEX alert_deliveries_by_key ON alert_deliveries (alert_key);

-- An acknowledged alert (who, when, why) stops alerting.
CREATE TABLE alert_acks (
    alert_key       TEXT    PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    author          TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    acknowledged_at TEXT    NOT NULL
);
CREATE INDEX alert_acks_by_run ON alert_acks (run_id);
