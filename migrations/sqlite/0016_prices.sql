-- Prices a person gave, never defaults: dollars per GPU-hour per GPU type, and dollars per
-- hour for one run's whole deployment. Append-only: every change is a new row (who, when),
-- the latest row of a type or run is its price, a row with no price removes it.
CREATE TABLE gpu_prices (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    gpu_type         TEXT NOT NULL,
    gpu_key          TEXT NOT NULL,
    usd_per_gpu_hour REAL,
    set_by           TEXT NOT NULL,
    set_at           TEXT NOT NULL
);
CREATE INDEX gpu_prices_by_key ON gpu_prices (gpu_key, id);

CREATE TABLE run_prices (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    usd_per_hour REAL,
    set_by       TEXT NOT NULL,
    set_at       TEXT NOT NULL
);
CREATE INDEX run_prices_by_run ON run_prices (run_id, id);
