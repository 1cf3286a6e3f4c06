-- A cancel request for a running sweep, so that any process serving this
-- database can cancel a sweep another one runs: the runner polls it and stops. RFC 3339
-- UTC text; NULL while nobody asked.
ALTER TABLE runs ADD COLUMN cancel_requested_at TEXT;
