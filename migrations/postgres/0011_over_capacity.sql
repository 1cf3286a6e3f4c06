-- PostgreSQL twin of migrations/sqlite/0011: a level found over capacity while it ran.
ALTER TABLE points ADD COLUMN over_capacity BOOLEAN NOT NULL DEFAULT FALSE;
