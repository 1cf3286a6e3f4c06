-- PostgreSQL twin of migrations/sqlite/0014 (same number, same name): nothing to change.
-- PostgreSQL's search reads `run_tags` through its own trigram index (0009), maintained
-- per row in O(log n): a run's tags cost linear time, and no derived table holds them.
SELECT 1;
