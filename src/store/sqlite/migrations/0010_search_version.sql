-- Never edit: append a new step instead.
-- The search index gets an explicit version: which columns its text holds, in which
-- order (src/domain/fields.rs, `search_version`: the field table's searched columns).
-- caseload adds rows to the index only when `search_meta.version` is its own, and every
-- migration that changes the searched columns sets the new version and rebuilds the index
-- (a test holds the latest such migration to the field table), so a caseload of another
-- version left running over an upgrade never adds rows of another shape. Caseloads of
-- schema 9 and older do not check the version: the index's column is named anew (`doc`,
-- no longer `folded`) so that their indexing fails on the name and changes nothing, as
-- migration 9 did for schema 8; their searches, which name only the table, still work.
-- From here on no rename is needed. The columns are now in the field table's order
-- (params before notes), as is the trigger that marks a changed row for indexing again.
-- The index is rebuilt by the TUI's background indexing behind the mark (searches scan
-- meanwhile).
ALTER TABLE search_meta ADD COLUMN version TEXT NOT NULL DEFAULT '';
DROP TABLE item_search_terms;
DROP TABLE item_search;
CREATE VIRTUAL TABLE item_search USING fts5(
    doc, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1');
CREATE VIRTUAL TABLE item_search_terms USING fts5vocab(item_search, 'row');
UPDATE search_meta SET version = '1:title,body,params,notes,result,error', indexed = 0;
DELETE FROM search_dirty;
DROP TRIGGER items_search_dirty;
CREATE TRIGGER items_search_dirty AFTER UPDATE OF title, body, params, notes, result, error
ON items WHEN NEW.id <= (SELECT indexed FROM search_meta) BEGIN
    INSERT OR IGNORE INTO search_dirty (id) VALUES (NEW.id);
END;
