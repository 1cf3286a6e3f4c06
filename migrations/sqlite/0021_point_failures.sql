-- The failed requests of a level by kind, as the source counted them: a JSON list of
-- {"kind", "count", "example"?} (app/src/domain/model/point.rs, `Failure`), most frequent
-- first. NULL: the source names no kinds (the count alone is `requests_failed`).
ALTER TABLE points ADD COLUMN failures_json TEXT;
