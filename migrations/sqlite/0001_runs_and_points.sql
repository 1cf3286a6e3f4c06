-- Runs and their load levels. Append-only: never edit a migration that has shipped;
-- add a new file instead. Keywords in upper case, identifiers in snake_case.

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    -- Public id used in URLs and the API; the row id never leaves the server.
    public_id        TEXT    NOT NULL UNIQUE,
    name             TEXT    NOT NULL,
    -- RFC 3339, UTC, second precision: sorts as text.
    created_at       TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('complete', 'partial', 'running', 'interrupted')),
    source_format    TEXT    NOT NULL,
    source_file_name TEXT,
    model            TEXT,
    engine           TEXT,
    engine_version   TEXT,
    gpu_type         TEXT,
    gpu_count        INTEGER CHECK (gpu_count IS NULL OR gpu_count > 0),
    endpoint_kind    TEXT    CHECK (endpoint_kind IS NULL OR endpoint_kind IN ('completions', 'chat')),
    max_tokens       INTEGER CHECK (max_tokens IS NULL OR max_tokens > 0),
    prompt_tokens    INTEGER CHECK (prompt_tokens IS NULL OR prompt_tokens >= 0),
    notes            TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX runs_created_at ON runs (created_at DESC);

CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tag    TEXT    NOT NULL,
    PRIMARY KEY (run_id, tag)
);

-- One load level of a run. NULL means "not reported by the source", never zero.
CREATE TABLE points (
    id                        INTEGER PRIMARY KEY,
    run_id                    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    -- Position within the run, in load order.
    seq                       INTEGER NOT NULL,
    load_kind                 TEXT    NOT NULL CHECK (load_kind IN ('concurrency', 'request_rate')),
    load_value                REAL    NOT NULL CHECK (load_value > 0),
    requests_ok               INTEGER,
    requests_failed           INTEGER,
    wall_s                    REAL,
    output_tok_s              REAL,
    latency_avg_ms            REAL,
    latency_p50_ms            REAL,
    latency_p90_ms            REAL,
    latency_p99_ms            REAL,
    ttft_avg_ms               REAL,
    ttft_p50_ms               REAL,
    ttft_p99_ms               REAL,
    itl_avg_ms                REAL,
    itl_p50_ms                REAL,
    itl_p99_ms                REAL,
    output_tokens_per_request REAL,
    -- 1 when the source cut this level off (its missing values are lost, not unmeasured).
    truncated                 INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1)),
    UNIQUE (run_id, seq)
);
