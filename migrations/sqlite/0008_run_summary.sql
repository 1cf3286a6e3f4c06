-- Each run's summary for the runs list, so a page reads it instead of
-- computing it from `points` and `annotations` for every run: the levels shown (not
-- hidden by an annotation) and the peak output tok/s over the levels used (neither
-- hidden nor excluded). Kept up to date by app/src/db/summary.rs in the transaction of
-- every write that changes it (a run stored, a level appended, an annotation added,
-- edited or deleted). The backfill is the list's former computation (LOAD_REL_EPS = 1e-9).
ALTER TABLE runs ADD COLUMN level_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN peak_tok_s REAL;

UPDATE runs SET
    level_count = (
        SELECT COUNT(*) FROM points p WHERE p.run_id = runs.id
           AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = p.run_id AND a.effect IN ('hide') AND (
               a.anchor = 'run'
               OR (a.anchor = 'point' AND a.load_kind = p.load_kind
                   AND abs(a.load_from - p.load_value) <= 1e-9 * max(1.0, abs(a.load_from), abs(p.load_value)))
               OR (a.anchor = 'range' AND a.load_kind = p.load_kind
                   AND p.load_value >= a.load_from - 1e-9 * max(1.0, abs(a.load_from))
                   AND p.load_value <= a.load_to + 1e-9 * max(1.0, abs(a.load_to)))))),
    peak_tok_s = (
        SELECT MAX(p.output_tok_s) FROM points p WHERE p.run_id = runs.id
           AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = p.run_id AND a.effect IN ('hide', 'exclude') AND (
               a.anchor = 'run'
               OR (a.anchor = 'point' AND a.load_kind = p.load_kind
                   AND abs(a.load_from - p.load_value) <= 1e-9 * max(1.0, abs(a.load_from), abs(p.load_value)))
               OR (a.anchor = 'range' AND a.load_kind = p.load_kind
                   AND p.load_value >= a.load_from - 1e-9 * max(1.0, abs(a.load_from))
                   AND p.load_value <= a.load_to + 1e-9 * max(1.0, abs(a.load_to))))));

-- The list's sort orders (SQLite's indexes end in the rowid, `id`, the tie-break; a
-- backward scan serves DESC, and NULLs sort first ascending, so DESC puts them last).
CREATE INDEX runs_list_created ON runs (created_at, id);
CREATE INDEX runs_list_name ON runs (name COLLATE NOCASE);
CREATE INDEX runs_list_levels ON runs (level_count);
CREATE INDEX runs_list_peak ON runs (peak_tok_s);
CREATE INDEX runs_list_model_sort ON runs (model COLLATE NOCASE);
CREATE INDEX runs_list_gpu_sort ON runs (gpu_type COLLATE NOCASE);
-- The filters (the endpoint's also serves its sort), and the menus' distinct values (read
-- by skipping through these).
CREATE INDEX runs_list_model ON runs (model);
CREATE INDEX runs_list_engine ON runs (engine);
CREATE INDEX runs_list_gpu ON runs (gpu_type);
CREATE INDEX runs_list_endpoint ON runs (endpoint_kind);
CREATE INDEX runs_list_source ON runs (source_format);
CREATE INDEX run_tags_tag ON run_tags (tag, run_id);
