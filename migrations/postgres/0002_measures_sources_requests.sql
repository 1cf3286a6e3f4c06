-- PostgreSQL twin of migrations/sqlite/0002: every statistic a source reports, how the
-- source defines its numbers, the source files themselves, and per-request records.

CREATE TABLE point_measures (
    point_id BIGINT NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    metric   TEXT   NOT NULL,
    stat     TEXT   NOT NULL,
    value    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (point_id, metric, stat)
);

-- The source's own fields for the level (JSON text, kept byte for byte: not jsonb).
ALTER TABLE points ADD COLUMN raw_json TEXT;

-- How the source defines TTFT, token counts, throughput windows … (JSON of `Definitions`).
ALTER TABLE runs ADD COLUMN definitions_json TEXT NOT NULL DEFAULT '{}';

-- The files a run was imported from, byte for byte.
CREATE TABLE run_sources (
    run_id    BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       BIGINT NOT NULL,
    file_name TEXT,
    format    TEXT   NOT NULL,
    content   BYTEA  NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- Per-request records, where the source kept them; any percentile can be recomputed.
CREATE TABLE requests (
    point_id      BIGINT  NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    seq           BIGINT  NOT NULL,
    ok            BOOLEAN NOT NULL,
    ttft_ms       DOUBLE PRECISION,
    e2e_ms        DOUBLE PRECISION,
    tpot_ms       DOUBLE PRECISION,
    input_tokens  DOUBLE PRECISION,
    output_tokens DOUBLE PRECISION,
    error         TEXT,
    PRIMARY KEY (point_id, seq)
);
