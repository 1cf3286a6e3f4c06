-- The runs list's text search: a trigram full-text index over the fields the
-- search reads (name, model, engine, GPU, notes, and the tags one per line), so a search
-- of 3 characters or more reads the runs whose fields contain it instead of every run.
-- The list still applies its LIKE to those runs: the index only narrows (its case
-- folding is Unicode's, a superset of LIKE's ASCII folding). `runs_search` is derived:
-- the triggers below keep it in step with `runs` and `run_tags` in the same transaction,
-- nothing else writes it, and `plateau db copy` leaves it to the target's triggers.
CREATE VIRTUAL TABLE runs_search USING fts5(name, model, engine, gpu_type, notes, tags, tokenize = 'trigram');

INSERT INTO runs_search (rowid, name, model, engine, gpu_type, notes, tags)
SELECT r.id, r.name, r.model, r.engine, r.gpu_type, r.notes,
       (SELECT group_concat(t.tag, char(10)) FROM run_tags t WHERE t.run_id = r.id)
FROM runs r;

CREATE TRIGGER runs_search_insert AFTER INSERT ON runs BEGIN
    INSERT INTO runs_search (rowid, name, model, engine, gpu_type, notes, tags)
    VALUES (new.id, new.name, new.model, new.engine, new.gpu_type, new.notes,
            (SELECT group_concat(t.tag, char(10)) FROM run_tags t WHERE t.run_id = new.id));
END;

CREATE TRIGGER runs_search_update AFTER UPDATE OF name, model, engine, gpu_type, notes ON runs BEGIN
    UPDATE runs_search SET name = new.name, model = new.model, engine = new.engine,
                           gpu_type = new.gpu_type, notes = new.notes
    WHERE rowid = new.id;
END;

CREATE TRIGGER runs_search_delete AFTER DELETE ON runs BEGIN
    DELETE FROM runs_search WHERE rowid = old.id;
END;

CREATE TRIGGER runs_search_tag_insert AFTER INSERT ON run_tags BEGIN
    UPDATE runs_search SET tags = (SELECT group_concat(t.tag, char(10)) FROM run_tags t WHERE t.run_id = new.run_id)
    WHERE rowid = new.run_id;
END;

CREATE TRIGGER runs_search_tag_delete AFTER DELETE ON run_tags BEGIN
    UPDATE runs_search SET tags = (SELECT group_concat(t.tag, char(10)) FROM run_tags t WHERE t.run_id = old.run_id)
    WHERE rowid = old.run_id;
END;
