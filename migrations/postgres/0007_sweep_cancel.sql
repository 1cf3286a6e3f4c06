-- PostgreSQL twin of migrations/sqlite/0007: a cancel request for a running sweep, polled
-- by the replica that runs it.
ALTER TABLE runs ADD COLUMN cancel_requested_at TIMESTAMPTZ;
