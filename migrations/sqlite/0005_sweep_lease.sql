-- A live sweep's lease. The process writing a `running` run (a sweep started by the
-- server, `plateau sweep` into the same file, or `plateau sweep --server` through the
-- live-runs API) renews `heartbeat_at` every few seconds; a `running` run whose
-- heartbeat is missing or older than the lease (30 s, app::db::SWEEP_LEASE) counts as
-- interrupted, when it is read and when a server starts. RFC 3339 UTC with milliseconds.
ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;
