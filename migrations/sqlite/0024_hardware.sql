-- The hardware a team describes for the roofline: GPUs it adds or whose shipped figures it
-- corrects (`gpu_specs`), and the facts of its models (`model_facts`). Append-only like the
-- prices: every change is a new row (who, when), the latest row of a name is in force, a
-- row without figures (`spec` / `facts` NULL) removes it. The figures are one JSON object.
CREATE TABLE gpu_specs (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    name     TEXT NOT NULL,
    name_key TEXT NOT NULL,
    spec     TEXT,
    set_by   TEXT NOT NULL,
    set_at   TEXT NOT NULL
);
CREATE INDEX gpu_specs_by_key ON gpu_specs (name_key, id);

CREATE TABLE model_facts (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    model     TEXT NOT NULL,
    model_key TEXT NOT NULL,
    facts     TEXT,
    set_by    TEXT NOT NULL,
    set_at    TEXT NOT NULL
);
CREATE INDEX model_facts_by_key ON model_facts (model_key, id);
