-- PostgreSQL twin of migrations/sqlite/0010: the inference server's own metrics during
-- each level (a live sweep's scrape of its Prometheus endpoint, or AIPerf's
-- server-metrics export). Types and names: app/src/domain/telemetry.rs.

CREATE TABLE level_telemetry (
    point_id       BIGINT NOT NULL PRIMARY KEY REFERENCES points (id) ON DELETE CASCADE,
    engine         TEXT,
    source         TEXT   NOT NULL CHECK (source IN ('scrape', 'aiperf')),
    interval_ms    DOUBLE PRECISION,
    window_s       DOUBLE PRECISION,
    scrapes_ok     BIGINT NOT NULL,
    scrapes_failed BIGINT NOT NULL,
    series_dropped BIGINT NOT NULL
);

-- JSON kept as text, byte for byte (not jsonb): numbers read back digit for digit.
CREATE TABLE level_series (
    point_id    BIGINT NOT NULL REFERENCES level_telemetry (point_id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    name        TEXT   NOT NULL,
    source_name TEXT   NOT NULL,
    kind        TEXT   NOT NULL CHECK (kind IN ('gauge', 'gauge_stats', 'counter', 'histogram')),
    labels_json TEXT   NOT NULL,
    data_json   TEXT   NOT NULL,
    PRIMARY KEY (point_id, seq)
);
CREATE INDEX level_series_name ON level_series (point_id, name);
