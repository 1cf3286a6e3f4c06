-- Issue 14: the inference server's own metrics during each level (scraped from its
-- Prometheus endpoint by a live sweep, or imported from AIPerf's server-metrics export).
-- Types and names: app/src/domain/telemetry.rs; SQL: app/src/db/telemetry.rs.

-- One row per level that has telemetry: how it was collected.
CREATE TABLE level_telemetry (
    point_id       INTEGER NOT NULL PRIMARY KEY REFERENCES points (id) ON DELETE CASCADE,
    engine         TEXT,
    source         TEXT    NOT NULL CHECK (source IN ('scrape', 'aiperf')),
    interval_ms    REAL,
    window_s       REAL,
    scrapes_ok     INTEGER NOT NULL,
    scrapes_failed INTEGER NOT NULL,
    series_dropped INTEGER NOT NULL
);

-- Its series: a metric with one set of labels. `name` is Plateau's normalised name (or the
-- engine's own for a metric Plateau does not know), `source_name` the engine's own;
-- `labels_json` a JSON array of [name, value] pairs; `data_json` the values, by `kind`
-- (gauge points, gauge statistics, a counter's delta, a histogram's bucket deltas).
CREATE TABLE level_series (
    point_id    INTEGER NOT NULL REFERENCES level_telemetry (point_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    source_name TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('gauge', 'gauge_stats', 'counter', 'histogram')),
    labels_json TEXT    NOT NULL,
    data_json   TEXT    NOT NULL,
    PRIMARY KEY (point_id, seq)
);
CREATE INDEX level_series_name ON level_series (point_id, name);
