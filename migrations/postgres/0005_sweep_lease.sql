-- PostgreSQL twin of migrations/sqlite/0005: a live sweep's lease (see app::db::SWEEP_LEASE).
ALTER TABLE runs ADD COLUMN heartbeat_at TIMESTAMPTZ;
