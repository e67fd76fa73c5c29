-- Never edit: append a new step instead.
-- `source`: where a record came from (`caseload add --source NAME`, a column of import and
-- export), searched. Search's text gains it as its last line: a NULL adds nothing to
-- concat_ws, so the rows indexed before hold the same text and the index is kept; its
-- version moves on, so that a caseload of schema 10 (which would index rows without their
-- source) adds nothing more to it.
ALTER TABLE items ADD COLUMN source TEXT NULL;
UPDATE search_meta SET version = '1:title,body,params,notes,result,error,source';
DROP TRIGGER items_search_dirty;
CREATE TRIGGER items_search_dirty AFTER UPDATE OF title, body, params, notes, result, error, source
ON items WHEN NEW.id <= (SELECT indexed FROM search_meta) BEGIN
    INSERT OR IGNORE INTO search_dirty (id) VALUES (NEW.id);
END;
