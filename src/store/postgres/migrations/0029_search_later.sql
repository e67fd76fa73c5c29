-- PostgreSQL schema version 29. Never edit: append a new step instead.
-- The search index beside an import (issue 32 §4: import with the index ≥ 0.6x without).
-- `items.search_text` (migration 23) was a stored generated column: every INSERT folded
-- its row and added ~400 trigrams to the GIN index, inside the import's transactions,
-- on the import's one connection (0.46x on a quiet machine). Now it is a plain column
-- the server keeps by a trigger, with one exception: rows inserted in a transaction that
-- set `caseload.search_later` to `on` (an import's batches) are left NULL, "not indexed
-- yet", and `caseload import` fills them on a second connection while it writes the next
-- batches (`UPDATE items SET search_text = NULL WHERE …`: the trigger computes the fold
-- whenever the column is named in an UPDATE, so nobody can store any other text there).
-- Searches read a row whose search_text is NULL by the scan's own test (src/store/
-- postgres/search.rs), found through `items_unindexed`, a partial index of those rows:
-- answers stay the scan's at every moment, and an import killed at any point leaves rows
-- that are either indexed or NULL, never half-indexed (each UPDATE is one statement).
-- On PostgreSQL 12 (no DROP EXPRESSION) the column stays generated, as before.
CREATE OR REPLACE FUNCTION caseload_search_index(rebuild BOOLEAN DEFAULT false) RETURNS text
LANGUAGE plpgsql
AS $search$
DECLARE
    trgm NAME;
    has_column BOOLEAN;
    generated BOOLEAN;
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    SELECT n.nspname INTO trgm FROM pg_catalog.pg_extension e
        JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
        WHERE attrelid = format('%I.items', current_schema())::regclass
          AND attname = 'search_text' AND NOT attisdropped) INTO has_column;
    IF has_column AND rebuild THEN
        DROP TRIGGER IF EXISTS items_search_text ON items;
        ALTER TABLE items DROP COLUMN search_text;
        has_column := false;
    END IF;
    IF trgm IS NULL THEN
        RETURN CASE WHEN has_column THEN 'column' ELSE 'scan' END;
    END IF;
    IF NOT has_column THEN
        -- Filled in one rewrite (faster than an UPDATE of every row), then made plain.
        ALTER TABLE items ADD COLUMN search_text TEXT GENERATED ALWAYS AS (caseload_fold(
            coalesce(title, '') || E'\n' || coalesce(body, '') || E'\n'
            || coalesce(params::text, '') || E'\n' || coalesce(notes, '') || E'\n'
            || coalesce(result, '') || E'\n' || coalesce(error, '') || E'\n'
            || coalesce(source, ''))) STORED;
    END IF;
    SELECT attgenerated <> '' INTO generated FROM pg_catalog.pg_attribute
        WHERE attrelid = format('%I.items', current_schema())::regclass
          AND attname = 'search_text' AND NOT attisdropped;
    IF generated AND current_setting('server_version_num')::int >= 130000 THEN
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION caseload_search_text() RETURNS trigger
            LANGUAGE plpgsql %s AS $$
            BEGIN
                IF TG_OP = 'INSERT'
                   AND coalesce(current_setting('caseload.search_later', true), '') = 'on' THEN
                    NEW.search_text := NULL;
                ELSE
                    NEW.search_text := caseload_fold(
                        coalesce(NEW.title, '') || E'\n' || coalesce(NEW.body, '') || E'\n'
                        || coalesce(NEW.params::text, '') || E'\n' || coalesce(NEW.notes, '')
                        || E'\n' || coalesce(NEW.result, '') || E'\n'
                        || coalesce(NEW.error, '') || E'\n' || coalesce(NEW.source, ''));
                END IF;
                RETURN NEW;
            END $$ $f$, pinned);
        ALTER TABLE items ALTER COLUMN search_text DROP EXPRESSION;
        CREATE TRIGGER items_search_text
            BEFORE INSERT OR UPDATE OF title, body, params, notes, result, error, source,
                search_text
            ON items FOR EACH ROW EXECUTE FUNCTION caseload_search_text();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class
        WHERE relname = 'items_unindexed' AND relnamespace = current_schema()::regnamespace) THEN
        CREATE INDEX items_unindexed ON items (id) WHERE search_text IS NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class
        WHERE relname = 'items_search' AND relnamespace = current_schema()::regnamespace) THEN
        EXECUTE format('CREATE INDEX items_search ON items USING gin (search_text %I.gin_trgm_ops)',
            trgm);
    END IF;
    RETURN 'index';
END
$search$;

SELECT caseload_search_index();
