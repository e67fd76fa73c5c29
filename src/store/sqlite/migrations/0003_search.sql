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
