-- PostgreSQL schema version 25. Never edit: append a new step instead.
-- A merged duplicate names the item it went into (issue 27): `duplicate_of`, set by
-- `caseload merge` in the transaction that cancels it and cleared when it is reopened;
-- `show`, `--json` and `export` show it (a column of the field table, src/domain/fields.rs).
-- Items merged before this step get it from their last `cancelled` event, which named it.
ALTER TABLE items ADD COLUMN duplicate_of BIGINT NULL;
UPDATE items SET duplicate_of = (SELECT (e.detail ->> 'duplicate_of')::bigint
    FROM events e WHERE e.item_id = items.id AND e.kind = 'cancelled'
    ORDER BY e.id DESC LIMIT 1)
WHERE state = 'cancelled'
  AND EXISTS (SELECT 1 FROM events e WHERE e.item_id = items.id AND e.kind = 'cancelled'
              AND e.detail ->> 'duplicate_of' IS NOT NULL);

-- The items merged in a period, per queue (`report --by queue`: merged as duplicate).
CREATE INDEX items_merged ON items (finished_at) WHERE duplicate_of IS NOT NULL;
