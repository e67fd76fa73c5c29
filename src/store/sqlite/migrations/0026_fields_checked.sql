-- SQLite schema version 26. Never edit: append a new step instead.
-- A Complete no longer checks every field of a record that was checked as it is (issue 26
-- §4; BENCHMARKS.md, "Complete with the record's digest"). `items.fields_checked` is a
-- digest (keyed 128-bit SipHash, src/store/ops/fields.rs `digest`) of the field
-- definitions' version, the item's queue and its params text, written when every field of
-- the record was found to keep its rules (add, set); Complete recomputes it from what it
-- reads and checks every field only when the two differ. Nothing clears a digest: a
-- change to the params (any writer, raw SQL included), to the item's queue or to any
-- queue's fields makes the stored one differ.
--
-- `fields_version.n` changes with every change to any queue's fields, by these triggers,
-- so raw SQL is counted too. It is a random number, not a counter: a change that rolls
-- back and a different one after it must not share a version (a process keeps the
-- definitions it read per version), nor a backup restored over a file that went on.
ALTER TABLE items ADD COLUMN fields_checked BLOB NULL;

CREATE TABLE fields_version (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    n    INTEGER NOT NULL
);
INSERT INTO fields_version (one, n) VALUES (1, random());

CREATE TRIGGER queue_fields_version_insert AFTER INSERT ON queue_fields BEGIN
    UPDATE fields_version SET n = random();
END;
CREATE TRIGGER queue_fields_version_update AFTER UPDATE ON queue_fields BEGIN
    UPDATE fields_version SET n = random();
END;
CREATE TRIGGER queue_fields_version_delete AFTER DELETE ON queue_fields BEGIN
    UPDATE fields_version SET n = random();
END;
