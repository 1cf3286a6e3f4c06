-- A level's server metrics can come from a saved Prometheus scrape imported with its result.
-- SQLite cannot change a CHECK constraint: both telemetry tables are rebuilt. The series
-- table goes first, so that dropping the old telemetry table cascades to nothing.
CREATE TABLE level_telemetry_new (
    point_id       INTEGER NOT NULL PRIMARY KEY REFERENCES points (id) ON DELETE CASCADE,
    engine         TEXT,
    source         TEXT    NOT NULL CHECK (source IN ('scrape', 'aiperf', 'saved_scrape')),
    interval_ms    REAL,
    window_s       REAL,
    scrapes_ok     INTEGER NOT NULL,
    scrapes_failed INTEGER NOT NULL,
    series_dropped INTEGER NOT NULL
);
INSERT INTO level_telemetry_new
    SELECT point_id, engine, source, interval_ms, window_s, scrapes_ok, scrapes_failed, series_dropped
    FROM level_telemetry;

CREATE TABLE level_series_new (
    point_id    INTEGER NOT NULL REFERENCES level_telemetry_new (point_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    source_name TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('gauge', 'gauge_stats', 'counter', 'histogram')),
    labels_json TEXT    NOT NULL,
    data_json   TEXT    NOT NULL,
    PRIMARY KEY (point_id, seq)
);
INSERT INTO level_series_new
    SELECT point_id, seq, name, source_name, kind, labels_json, data_json FROM level_series;

DROP TABLE level_series;
DROP TABLE level_telemetry;
ALTER TABLE level_telemetry_new RENAME TO level_telemetry;
ALTER TABLE level_series_new RENAME TO level_series;
CREATE INDEX level_series_name ON level_series (point_id, name);
