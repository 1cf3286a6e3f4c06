-- Live sweeps were stored with the source format of Plateau's own export (`plateau`) and
-- read "Source: Plateau export". They now have their own, `live_sweep`. A run
-- a live sweep created is the only kind with a lease (`heartbeat_at`, migration 0005);
-- imported runs never get one.
UPDATE runs SET source_format = 'live_sweep' WHERE source_format = 'plateau' AND heartbeat_at IS NOT NULL;
