-- PostgreSQL twin of migrations/sqlite/0009: the runs list's text search reads trigram
-- indexes (pg_trgm's GIN operator class serves ILIKE '%…%' exactly: the index narrows,
-- the row is rechecked). pg_trgm ships with PostgreSQL and is a trusted extension (a
-- database owner may create it); where it cannot be created (no privilege, not
-- installed) the migration still applies, without the indexes, and the search scans
-- as before: same results, slower at scale. `fastupdate = off`: a search reads the index
-- alone, not a pending list of recent rows as well (up to 4 MB per index after an
-- import, scanned by every search until vacuum: 47 → 4 ms for a rare search at 100,000
-- runs).
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available (%): the runs list search is not indexed', SQLERRM;
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        EXECUTE format('CREATE INDEX runs_search_name ON runs USING gin (name %I.gin_trgm_ops) WITH (fastupdate = off)', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
        EXECUTE format('CREATE INDEX runs_search_model ON runs USING gin (model %I.gin_trgm_ops) WITH (fastupdate = off)', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
        EXECUTE format('CREATE INDEX runs_search_engine ON runs USING gin (engine %I.gin_trgm_ops) WITH (fastupdate = off)', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
        EXECUTE format('CREATE INDEX runs_search_gpu ON runs USING gin (gpu_type %I.gin_trgm_ops) WITH (fastupdate = off)', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
        EXECUTE format('CREATE INDEX runs_search_notes ON runs USING gin (notes %I.gin_trgm_ops) WITH (fastupdate = off)', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
        EXECUTE format('CREATE INDEX run_tags_search ON run_tags USING gin (tag %I.gin_trgm_ops) WITH (fastupdate = off)', (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'));
    END IF;
END
$$;
