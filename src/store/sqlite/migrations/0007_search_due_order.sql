-- Never edit: append a new step instead.
-- Search: a trigram index over each item's text, folded by caseload_fold (the rule of
-- src/domain/search.rs, so index and scan agree), kept behind a high-water mark so that
-- adding items never pays for it. Items with an id above
-- `search_meta.indexed`, and items changed after they were indexed (`search_dirty`), are
-- scanned instead; the TUI indexes them in the background (src/store/sqlite/search.rs).
CREATE VIRTUAL TABLE item_search USING fts5(
    text, content = '', contentless_delete = 1, tokenize = 'trigram');

CREATE TABLE search_meta (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    indexed  INTEGER NOT NULL
);
INSERT INTO search_meta (one, indexed) VALUES (1, 0);

CREATE TABLE search_dirty (id INTEGER PRIMARY KEY);

CREATE TRIGGER items_search_dirty AFTER UPDATE OF title, body, notes, result, params, error
ON items WHEN NEW.id <= (SELECT indexed FROM search_meta) BEGIN
    INSERT OR IGNORE INTO search_dirty (id) VALUES (NEW.id);
END;

-- The take order of each queue: 'priority' (priority, then age) or 'due'.
ALTER TABLE queues ADD COLUMN take_order TEXT NOT NULL DEFAULT 'priority'
    CHECK (take_order IN ('priority', 'due'));
-- Take order of a queue ordered by due time: overdue and soonest due first, items without
-- a due time after those with one (the CASE sorts them last), then priority and age.
CREATE INDEX items_take_due ON items (queue, (CASE WHEN due_at IS NULL THEN 9223372036854775807 ELSE due_at END), priority DESC, created_at, id, state) WHERE state = 'open';
