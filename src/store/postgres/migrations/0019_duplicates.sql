-- PostgreSQL schema version 19. Never edit: append a new step instead.
-- Duplicates (issue 27): the keys of each item's duplicate-key fields (a field's spec says
-- `"dedupe": "key"`), normalised by caseload (domain::duplicates::key_of) and written in
-- the same transaction as every write of the item's params or queue (add, import, set,
-- edit, a field's definition), so that "which items have this VAT number" is one index
-- lookup at any size; and the pairs people said are the same (a merge) or not the same,
-- so that a pair is never offered again, in either order. Whoever may write items may
-- write their keys and pairs (the README's grants, on a database set up before this step).
CREATE TABLE item_keys (
    item_id  BIGINT NOT NULL REFERENCES items(id),
    field    TEXT NOT NULL,
    key      TEXT NOT NULL,
    PRIMARY KEY (item_id, field)
);
CREATE INDEX item_keys_key ON item_keys (field, key);

CREATE TABLE item_pairs (
    low      BIGINT NOT NULL REFERENCES items(id),
    high     BIGINT NOT NULL REFERENCES items(id),
    verdict  TEXT NOT NULL CHECK (verdict IN ('same', 'not_same')),
    actor    TEXT NOT NULL,
    at       BIGINT NOT NULL,
    PRIMARY KEY (low, high),
    CHECK (low < high)
);
CREATE INDEX item_pairs_high ON item_pairs (high, low);

DO $grant$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'items'
             AND privilege_type = 'UPDATE' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT, INSERT, DELETE ON item_keys TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
        EXECUTE 'GRANT SELECT, INSERT, UPDATE ON item_pairs TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$grant$;
