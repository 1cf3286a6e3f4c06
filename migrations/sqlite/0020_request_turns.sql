-- A request's turn (or agent step) in a multi-turn or agentic session, 1-based, and the
-- input tokens the server served from its prefix cache; NULL: single-turn, or not reported.
ALTER TABLE requests ADD COLUMN turn INTEGER CHECK (turn IS NULL OR turn >= 1);
ALTER TABLE requests ADD COLUMN cached_tokens REAL;
