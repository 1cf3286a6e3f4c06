-- A level's server metrics can come from a saved Prometheus scrape imported with its result.
ALTER TABLE level_telemetry
    DROP CONSTRAINT level_telemetry_source_check,
    ADD CONSTRAINT level_telemetry_source_check CHECK (source IN ('scrape', 'aiperf', 'saved_scrape'));
