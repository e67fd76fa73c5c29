-- SQLite schema version 19. Never edit: append a new step instead.
-- Duplicates (issue 27): the keys of each item's duplicate-key fields (a field's spec says
-- `"dedupe": "key"`), normalised by caseload (domain::duplicates::key_of) and written in
-- the same transaction as every write of the item's params or queue (add, import, set,
-- edit, a field's definition), so that "which items have this VAT number" is one index
-- lookup at any size; and the pairs people said are the same (a merge) or not the same,
-- so that a pair is never offered again, in either order.
CREATE TABLE item_keys (
    item_id  INTEGER NOT NULL REFERENCES items(id),
    field    TEXT NOT NULL,
    key      TEXT NOT NULL,
    PRIMARY KEY (item_id, field)
) WITHOUT ROWID;
CREATE INDEX item_keys_key ON item_keys (field, key);

CREATE TABLE item_pairs (
    low      INTEGER NOT NULL REFERENCES items(id),
    high     INTEGER NOT NULL REFERENCES items(id),
    verdict  TEXT NOT NULL CHECK (verdict IN ('same', 'not_same')),
    actor    TEXT NOT NULL,
    at       INTEGER NOT NULL,
    PRIMARY KEY (low, high),
    CHECK (low < high)
) WITHOUT ROWID;
CREATE INDEX item_pairs_high ON item_pairs (high, low);
