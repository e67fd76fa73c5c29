-- PostgreSQL schema version 28. Never edit: append a new step instead.
-- A Complete no longer checks every field of a record that its own database role found
-- keeping every rule as it is now (issue 26 §4; BENCHMARKS.md, "A field save without the
-- params parsed, PostgreSQL's digest stamped by the server"). As on SQLite (its step 26),
-- `items.fields_checked` is a digest (keyed 128-bit SipHash, src/store/ops/fields.rs
-- `digest`) of the field definitions' version, the item's queue and its params text,
-- written when every field of the record was found to keep its rules (add, import, set),
-- and Complete checks every field only when the digest differs from what it reads.
--
-- A staff role may write `items` (the README's grants) and can compute a digest itself
-- (the key is in caseload's source), so here the server says who wrote one:
-- `fields_checked_by` is set to the session's role (`session_user`) by the trigger below
-- on every write of either column, raw SQL included, and cleared with the digest. A
-- Complete trusts a digest only when its own session role wrote it. A role that forges
-- one in psql can thereby pass only its own Complete of a broken record, which it could
-- as well have written itself (`UPDATE items SET state = 'done'` is within its grants) —
-- never a colleague's.
--
-- `fields_version.n` changes with every change to any queue's fields (a statement
-- trigger), so a redefined field makes every digest differ.
ALTER TABLE items ADD COLUMN fields_checked BYTEA NULL;
ALTER TABLE items ADD COLUMN fields_checked_by TEXT NULL;

CREATE TABLE fields_version (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    n    BIGINT NOT NULL
);
INSERT INTO fields_version (one, n) VALUES (1, (random() * 9e18)::bigint);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION caseload_fields_version() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            UPDATE fields_version SET n = (random() * 9e18)::bigint;
            RETURN NULL;
        END
        $$ $f$, pinned);
    -- Not SECURITY DEFINER: session_user is the session's role either way.
    EXECUTE format($f$
        CREATE FUNCTION caseload_fields_checked_by() RETURNS trigger
        LANGUAGE plpgsql %s AS $$
        BEGIN
            NEW.fields_checked_by := CASE WHEN NEW.fields_checked IS NULL THEN NULL
                                          ELSE session_user::text END;
            RETURN NEW;
        END
        $$ $f$, pinned);
END
$migrate$;

CREATE TRIGGER queue_fields_version AFTER INSERT OR UPDATE OR DELETE ON queue_fields
    FOR EACH STATEMENT EXECUTE FUNCTION caseload_fields_version();
-- Fires whenever a statement writes either column (UPDATE OF: named in its SET list; no
-- other trigger changes them), and on an INSERT that gives either.
CREATE TRIGGER items_fields_checked_by BEFORE INSERT OR UPDATE OF fields_checked, fields_checked_by
    ON items FOR EACH ROW
    WHEN (NEW.fields_checked IS NOT NULL OR NEW.fields_checked_by IS NOT NULL)
    EXECUTE FUNCTION caseload_fields_checked_by();

-- Whoever may read the queues' fields may read their version (the README's grants, on a
-- database set up before this step).
DO $grant$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'queue_fields'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON fields_version TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$grant$;
