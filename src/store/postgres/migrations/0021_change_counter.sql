-- PostgreSQL schema version 21. Never edit: append a new step instead.
-- The change counter: how clients learn that another user changed something without
-- LISTEN, which a pooler in transaction mode cannot carry, and with one connection each.
-- Every write's COMMIT is followed, in the same round trip, by `caseload_changed()`
-- (a sequence's next value: no row lock, so concurrent writers never wait for each
-- other, and bumped only after the commit is visible, so a reader that sees the new
-- value also sees the change); screens and `claim --wait` read `caseload_changes()`
-- about once a second. Both are SECURITY DEFINER: everyday roles need no right on the
-- sequence.
CREATE SEQUENCE caseload_change_seq;

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION caseload_changed() RETURNS bigint
        LANGUAGE sql SECURITY DEFINER %s AS $$
            SELECT nextval('caseload_change_seq')
        $$ $f$, pinned);
    EXECUTE format($f$
        CREATE FUNCTION caseload_changes() RETURNS bigint
        LANGUAGE sql SECURITY DEFINER %s AS $$
            -- Before its first use, last_value is the first value to give.
            SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM caseload_change_seq
        $$ $f$, pinned);
END
$migrate$;
