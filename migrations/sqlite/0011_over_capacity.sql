-- An open-loop level found over capacity while it ran: requests in flight and
-- TTFT kept rising, so its averages describe a growing queue. Charts mark it. (0010 is the
-- server-metrics tables.)
ALTER TABLE points ADD COLUMN over_capacity BOOLEAN NOT NULL DEFAULT 0;
