-- PostgreSQL twin of migrations/sqlite/0008: each run's summary for the runs list (levels
-- shown, peak output tok/s over the levels used), kept up to date by
-- app/src/db/summary.rs, backfilled with the list's former computation
-- (LOAD_REL_EPS = 1e-9); indexes for the list's sorts, filters and menus.
ALTER TABLE runs ADD COLUMN level_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN peak_tok_s DOUBLE PRECISION;

UPDATE runs SET
    level_count = (
        SELECT COUNT(*) FROM points p WHERE p.run_id = runs.id
           AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = p.run_id AND a.effect IN ('hide') AND (
               a.anchor = 'run'
               OR (a.anchor = 'point' AND a.load_kind = p.load_kind
                   AND abs(a.load_from - p.load_value) <= 1e-9 * GREATEST(1.0, abs(a.load_from), abs(p.load_value)))
               OR (a.anchor = 'range' AND a.load_kind = p.load_kind
                   AND p.load_value >= a.load_from - 1e-9 * GREATEST(1.0, abs(a.load_from))
                   AND p.load_value <= a.load_to + 1e-9 * GREATEST(1.0, abs(a.load_to)))))),
    peak_tok_s = (
        SELECT MAX(p.output_tok_s) FROM points p WHERE p.run_id = runs.id
           AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = p.run_id AND a.effect IN ('hide', 'exclude') AND (
               a.anchor = 'run'
               OR (a.anchor = 'point' AND a.load_kind = p.load_kind
                   AND abs(a.load_from - p.load_value) <= 1e-9 * GREATEST(1.0, abs(a.load_from), abs(p.load_value)))
               OR (a.anchor = 'range' AND a.load_kind = p.load_kind
                   AND p.load_value >= a.load_from - 1e-9 * GREATEST(1.0, abs(a.load_from))
                   AND p.load_value <= a.load_to + 1e-9 * GREATEST(1.0, abs(a.load_to))))));

-- The list's sort orders, each with the id tie-break; unknown values sort last in both
-- directions (ASC NULLS LAST forward, DESC NULLS LAST needs its own index).
CREATE INDEX runs_list_created ON runs (created_at, id);
CREATE INDEX runs_list_name ON runs ((lower(name) COLLATE "C"), id);
CREATE INDEX runs_list_levels ON runs (level_count, id);
CREATE INDEX runs_list_peak ON runs (peak_tok_s, id);
CREATE INDEX runs_list_peak_desc ON runs (peak_tok_s DESC NULLS LAST, id DESC);
CREATE INDEX runs_list_model_sort ON runs ((lower(model) COLLATE "C"), id);
CREATE INDEX runs_list_model_sort_desc ON runs ((lower(model) COLLATE "C") DESC NULLS LAST, id DESC);
CREATE INDEX runs_list_gpu_sort ON runs ((lower(gpu_type) COLLATE "C"), id);
CREATE INDEX runs_list_gpu_sort_desc ON runs ((lower(gpu_type) COLLATE "C") DESC NULLS LAST, id DESC);
CREATE INDEX runs_list_endpoint_desc ON runs (endpoint_kind DESC NULLS LAST, id DESC);
-- The filters (ending in the id: two filters' matches meet in a merge join, index only),
-- and the menus' distinct values (read by skipping through these).
CREATE INDEX runs_list_model ON runs (model, id);
CREATE INDEX runs_list_engine ON runs (engine, id);
CREATE INDEX runs_list_gpu ON runs (gpu_type, id);
CREATE INDEX runs_list_endpoint ON runs (endpoint_kind, id);
CREATE INDEX runs_list_source ON runs (source_format, id);
CREATE INDEX run_tags_tag ON run_tags (tag, run_id);
