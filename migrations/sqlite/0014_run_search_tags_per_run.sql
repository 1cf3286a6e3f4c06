-- The runs list's text search index (0009) kept a run's tags by a trigger on each
-- `run_tags` row, which rebuilt all of the run's tags (group_concat) per tag inserted or
-- deleted: a run's n tags cost O(n²) under SQLite's write lock (10,000 tags: 22 s, while
-- every other write waited). SQLite has only row-level triggers, so the tags column of
-- `runs_search` is now refreshed by the code that writes a run's tags, once per run after
-- its tags, in the same transaction (`app::db::runs::refresh_search_tags`; `db copy`
-- refreshes every copied run's once). A deleted run's row still goes with the run
-- (`runs_search_delete`), so deleting a run's tags needs no refresh of its own.
DROP TRIGGER IF EXISTS runs_search_tag_insert;
DROP TRIGGER IF EXISTS runs_search_tag_delete;
