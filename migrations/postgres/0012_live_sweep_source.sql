-- Numbered 0012: main has 0010 (level telemetry) and 0011 (over capacity); sqlx applies
-- versions in order and allows the gap on this branch.
-- Live sweeps were stored with the source format of Plateau's own export (`plateau`) and
-- read "Source: Plateau export" (issue #17). They now have their own, `live_sweep`. A run
-- a live sweep created is the only kind with a lease (`heartbeat_at`, migration 0005);
-- imported runs never get one.
UPDATE runs SET source_format = 'live_sweep' WHERE source_format = 'plateau' AND heartbeat_at IS NOT NULL;
