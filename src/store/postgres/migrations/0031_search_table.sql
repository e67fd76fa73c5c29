-- PostgreSQL schema version 31. Never edit: append a new step instead.
-- The search index in a table of its own (issue 32 §4). Since schema 23 the fold of each
-- item's searched text was a column of `items` (`search_text`) with the GIN trigram index
-- on it; since schema 29 an import left it NULL and filled it on a second connection with
-- `UPDATE items`, which wrote a second heap version of each row and its entries in every
-- index of `items`, and held the row for the statement: a claim (`FOR UPDATE SKIP
-- LOCKED`) passed over a free item while the indexer had it.
-- Now the fold is `item_search (item_id, search_text)`, indexed by `item_search_trgm`,
-- and an item not indexed yet has a row in `item_search_pending` instead (an import's
-- rows: inserts in a transaction that set `caseload.search_later`). Searches take a row of
-- item_search_pending by the scan's own test (src/store/postgres/search.rs), so answers
-- are the scan's at every moment. The server keeps both tables by triggers on `items`
-- (SECURITY DEFINER: the roles that write items need no grant on them, and nobody can
-- store any other text there); `caseload_index_search()` indexes pending rows, in one
-- statement per batch, without locking any row of `items`: a claim never skips an item
-- for it. There is no foreign key to `items` on purpose: its check would lock the item
-- (`FOR KEY SHARE`, which a claim's `FOR UPDATE SKIP LOCKED` skips); the delete trigger
-- removes an item's rows instead.
-- Races: each writer of an item's search row first deletes the item's pending row, which
-- the indexer holds (locked, `SKIP LOCKED`) from the moment it takes it until it commits:
-- a change of the item's text either waits for the indexer and then writes the new fold
-- over the indexer's, or took the pending row first and the indexer passes over it.
-- The two tables exist in every schema (so the README's grants name them whether or not
-- pg_trgm is installed); caseload_search_index() fills them and adds the triggers and the
-- index where pg_trgm is. The rows of the old column move as they are (no refold): at a
-- million items, the copy and the index build take minutes under a lock that holds off
-- writes to items (readers go on).
CREATE TABLE item_search (
    item_id     BIGINT PRIMARY KEY,
    search_text TEXT NOT NULL
);
CREATE TABLE item_search_pending (item_id BIGINT PRIMARY KEY);

-- Whoever may read items may read what search reads (the README's grants, on a database
-- set up before this step).
DO $grant$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'items'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON item_search, item_search_pending TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$grant$;

CREATE OR REPLACE FUNCTION caseload_search_index(rebuild BOOLEAN DEFAULT false) RETURNS text
LANGUAGE plpgsql
AS $search$
DECLARE
    trgm NAME;
    has_column BOOLEAN;
    kept BOOLEAN;
    searched CONSTANT TEXT := $t$caseload_fold(coalesce(%1$s.title, '') || E'\n'
        || coalesce(%1$s.body, '') || E'\n' || coalesce(%1$s.params::text, '') || E'\n'
        || coalesce(%1$s.notes, '') || E'\n' || coalesce(%1$s.result, '') || E'\n'
        || coalesce(%1$s.error, '') || E'\n' || coalesce(%1$s.source, ''))$t$;
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    SELECT n.nspname INTO trgm FROM pg_catalog.pg_extension e
        JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
        WHERE attrelid = format('%I.items', current_schema())::regclass
          AND attname = 'search_text' AND NOT attisdropped) INTO has_column;
    -- The triggers keep item_search: the index's rows are there and current.
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger
        WHERE tgrelid = format('%I.items', current_schema())::regclass
          AND tgname = 'items_search_insert') INTO kept;
    IF trgm IS NULL AND NOT kept THEN
        IF has_column THEN
            DROP TRIGGER IF EXISTS items_search_text ON items;
            ALTER TABLE items DROP COLUMN search_text;
        END IF;
        DROP FUNCTION IF EXISTS caseload_search_text();
        RETURN 'scan';
    END IF;
    IF rebuild OR NOT kept THEN
        -- No item changes while the rows are copied (readers go on).
        LOCK TABLE items IN SHARE MODE;
        DROP TRIGGER IF EXISTS items_search_insert ON items;
        DROP TRIGGER IF EXISTS items_search_update ON items;
        DROP TRIGGER IF EXISTS items_search_delete ON items;
        -- Built once after the rows (faster than row by row).
        DROP INDEX IF EXISTS item_search_trgm;
        TRUNCATE item_search, item_search_pending;
        IF has_column AND NOT rebuild THEN
            INSERT INTO item_search (item_id, search_text)
                SELECT id, search_text FROM items WHERE search_text IS NOT NULL;
            INSERT INTO item_search_pending (item_id)
                SELECT id FROM items WHERE search_text IS NULL;
        ELSE
            EXECUTE format('INSERT INTO item_search (item_id, search_text) SELECT id, %s FROM items',
                format(searched, 'items'));
        END IF;
        IF has_column THEN
            DROP TRIGGER IF EXISTS items_search_text ON items;
            ALTER TABLE items DROP COLUMN search_text;
        END IF;
        DROP FUNCTION IF EXISTS caseload_search_text();
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION caseload_search_row() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER %s AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    DELETE FROM item_search_pending WHERE item_id = OLD.id;
                    DELETE FROM item_search WHERE item_id = OLD.id;
                ELSIF TG_OP = 'INSERT'
                   AND coalesce(current_setting('caseload.search_later', true), '') = 'on' THEN
                    INSERT INTO item_search_pending (item_id) VALUES (NEW.id)
                        ON CONFLICT (item_id) DO NOTHING;
                ELSE
                    IF TG_OP = 'UPDATE' THEN
                        DELETE FROM item_search_pending WHERE item_id = NEW.id;
                    END IF;
                    INSERT INTO item_search (item_id, search_text) VALUES (NEW.id, %s)
                        ON CONFLICT (item_id) DO UPDATE SET search_text = EXCLUDED.search_text;
                END IF;
                RETURN NULL;
            END $$ $f$, pinned, format(searched, 'NEW'));
        CREATE TRIGGER items_search_insert AFTER INSERT ON items
            FOR EACH ROW EXECUTE FUNCTION caseload_search_row();
        CREATE TRIGGER items_search_update AFTER UPDATE OF title, body, params, notes, result,
            error, source ON items
            FOR EACH ROW
            WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.body IS DISTINCT FROM NEW.body
                  OR OLD.params::text IS DISTINCT FROM NEW.params::text
                  OR OLD.notes IS DISTINCT FROM NEW.notes
                  OR OLD.result IS DISTINCT FROM NEW.result
                  OR OLD.error IS DISTINCT FROM NEW.error
                  OR OLD.source IS DISTINCT FROM NEW.source)
            EXECUTE FUNCTION caseload_search_row();
        CREATE TRIGGER items_search_delete AFTER DELETE ON items
            FOR EACH ROW EXECUTE FUNCTION caseload_search_row();
        -- Indexes the `budget` oldest pending rows above `above`, in one statement; the
        -- rows another indexer (or a change of the item) holds are passed over. Returns
        -- how many pending rows it took (0: none left).
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION caseload_index_search(above BIGINT, budget INTEGER)
            RETURNS INTEGER
            LANGUAGE sql SECURITY DEFINER %s AS $$
                WITH taken AS (
                    DELETE FROM item_search_pending WHERE item_id IN (
                        SELECT item_id FROM item_search_pending WHERE item_id > above
                        ORDER BY item_id LIMIT budget FOR UPDATE SKIP LOCKED)
                    RETURNING item_id
                ), indexed AS (
                    INSERT INTO item_search (item_id, search_text)
                    SELECT i.id, %s FROM items i JOIN taken t ON t.item_id = i.id
                    ON CONFLICT (item_id) DO UPDATE SET search_text = EXCLUDED.search_text
                )
                SELECT count(*)::int FROM taken
            $$ $f$, pinned, format(searched, 'i'));
    END IF;
    IF trgm IS NULL THEN
        RETURN 'column';
    END IF;
    IF to_regclass(format('%I.item_search_trgm', current_schema())) IS NULL THEN
        EXECUTE format(
            'CREATE INDEX item_search_trgm ON item_search USING gin (search_text %I.gin_trgm_ops)',
            trgm);
    END IF;
    RETURN 'index';
END
$search$;

SELECT caseload_search_index();
