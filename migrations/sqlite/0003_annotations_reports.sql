-- Issue 5: annotations with their edit history, dismissed anomaly proposals, saved
-- reports (titled views under a short slug) and snapshots (frozen data under a content hash).

CREATE TABLE annotations (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    anchor        TEXT    NOT NULL CHECK (anchor IN ('run', 'point', 'range', 'comparison')),
    load_kind     TEXT,
    load_from     REAL,
    load_to       REAL,
    -- JSON array of public run ids, for comparison anchors.
    compare_runs  TEXT,
    kind          TEXT    NOT NULL CHECK (kind IN ('note', 'cause', 'config_change', 'outlier', 'invalid', 'superseded')),
    effect        TEXT    NOT NULL CHECK (effect IN ('none', 'exclude', 'hide')),
    body          TEXT    NOT NULL,
    author        TEXT    NOT NULL,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    superseded_by TEXT,
    proposal_key  TEXT
);

CREATE INDEX annotations_run ON annotations (run_id);

-- Earlier versions of an annotation, kept on every edit.
CREATE TABLE annotation_revisions (
    id            INTEGER PRIMARY KEY,
    annotation_id INTEGER NOT NULL REFERENCES annotations (id) ON DELETE CASCADE,
    body          TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    effect        TEXT    NOT NULL,
    author        TEXT    NOT NULL,
    replaced_at   TEXT    NOT NULL
);

-- Anomaly proposals a person dismissed, by their stable key.
CREATE TABLE dismissed_proposals (
    proposal_key TEXT PRIMARY KEY,
    author       TEXT NOT NULL,
    dismissed_at TEXT NOT NULL
);

-- A saved view: the page path with its query string, under a short slug.
CREATE TABLE reports (
    slug        TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    view_path   TEXT NOT NULL,
    author      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

-- A frozen copy of a view's data and annotations; the id is derived from the content.
CREATE TABLE snapshots (
    id         TEXT PRIMARY KEY,
    title      TEXT NOT NULL,
    view_path  TEXT NOT NULL,
    payload    TEXT NOT NULL,
    author     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
