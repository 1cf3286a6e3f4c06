-- Issue 3: every statistic a source reports, how the source defines its numbers, the
-- source files themselves, and per-request records.

-- Statistics beyond the headline columns of `points` (which stay the home of output tok/s,
-- latency avg/p50/p90/p99, TTFT avg/p50/p99, chunk-gap ITL avg/p50/p99 and mean output
-- tokens per request). Names: see app/src/domain/metrics.rs (`Metric::as_str`, `Stat::name`).
CREATE TABLE point_measures (
    point_id INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    metric   TEXT    NOT NULL,
    stat     TEXT    NOT NULL,
    value    REAL    NOT NULL,
    PRIMARY KEY (point_id, metric, stat)
);

-- The source's own fields for the level (JSON), so a later importer can re-read them.
ALTER TABLE points ADD COLUMN raw_json TEXT;

-- How the source defines TTFT, token counts, throughput windows … (JSON of `Definitions`).
ALTER TABLE runs ADD COLUMN definitions_json TEXT NOT NULL DEFAULT '{}';

-- The files a run was imported from, byte for byte.
CREATE TABLE run_sources (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    file_name TEXT,
    format    TEXT    NOT NULL,
    content   BLOB    NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- Per-request records, where the source kept them; any percentile can be recomputed.
CREATE TABLE requests (
    point_id      INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    ok            INTEGER NOT NULL CHECK (ok IN (0, 1)),
    ttft_ms       REAL,
    e2e_ms        REAL,
    tpot_ms       REAL,
    input_tokens  REAL,
    output_tokens REAL,
    error         TEXT,
    PRIMARY KEY (point_id, seq)
);
