-- PostgreSQL schema version 23. Never edit: append a new step instead.
-- Search with an index (issue 32 §4). Where the pg_trgm extension is installed in the
-- database (a DBA runs `CREATE EXTENSION pg_trgm;` once), items get a stored column
-- `search_text`: caseload_fold (the fold of domain::search, as SQLite folds) of the text
-- search looks in (fields::searched: title, body, params, notes, result, error, source,
-- one per line), kept by the server on every insert and on every update of those columns,
-- and a GIN trigram index over it. A search then finds its rows through the index and
-- checks them with a plain LIKE on the stored text (no fold per row); without the
-- extension nothing is added and search scans as before (src/store/postgres/reads.rs
-- asks which). The column is stored rather than an expression index: checking a
-- candidate row would otherwise fold its text again (20-150 µs per KiB), thousands of
-- times for a word of middling frequency.
-- caseload_search_index() adds what is missing (the column, the index) when the
-- extension is there, and says what search uses: migration runs it, and `caseload init`
-- runs it again, so an extension installed later is used from the next `init` (which
-- `caseload doctor` says). With `rebuild` it first drops the column (after
-- caseload_refold() changed the fold: the stored text was folded the old way).
-- Adding the column rewrites items under an exclusive lock: at 1M items, minutes.
CREATE FUNCTION caseload_search_index(rebuild BOOLEAN DEFAULT false) RETURNS text
LANGUAGE plpgsql
AS $search$
DECLARE
    trgm NAME;
    has_column BOOLEAN;
BEGIN
    SELECT n.nspname INTO trgm FROM pg_catalog.pg_extension e
        JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
        WHERE attrelid = format('%I.items', current_schema())::regclass
          AND attname = 'search_text' AND NOT attisdropped) INTO has_column;
    IF has_column AND rebuild THEN
        ALTER TABLE items DROP COLUMN search_text;
        has_column := false;
    END IF;
    IF trgm IS NULL THEN
        RETURN CASE WHEN has_column THEN 'column' ELSE 'scan' END;
    END IF;
    IF NOT has_column THEN
        ALTER TABLE items ADD COLUMN search_text TEXT GENERATED ALWAYS AS (caseload_fold(
            coalesce(title, '') || E'\n' || coalesce(body, '') || E'\n'
            || coalesce(params::text, '') || E'\n' || coalesce(notes, '') || E'\n'
            || coalesce(result, '') || E'\n' || coalesce(error, '') || E'\n'
            || coalesce(source, ''))) STORED;
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
