-- PostgreSQL schema version 26. Never edit: append a new step instead.
-- The open items with a due time, counted per queue and hour of their due time, for
-- `caseload metrics` (overdue and due soon, read every 15 s): it sums the whole hours
-- here and counts only the two partial hours at the edges (now, and now + 24 h) in the
-- due index, instead of counting every due item's index entry (~100,000 at a million
-- items, most of the command's time). `hour` is floor(due_at / 1 h). Each (queue, hour)
-- is spread over up to 16 rows by item id (`shard` = id % 16), so that concurrent
-- finishes of items due in the same hour seldom wait on one row, and so that a row counts
-- exactly the items of its shard: a row that reaches 0 is deleted, and the table never
-- holds more rows than open due items.
--
-- Kept in the writer's transaction, in two steps: a row trigger on items writes each
-- change (an item entering or leaving the open state, its due time or queue changed, an
-- item inserted or deleted) to `due_changes`, and a deferred trigger adds that
-- transaction's changes up into `due_hours` once, at its commit. A counter row updated
-- once per item would be updated thousands of times by one import whose items are due in
-- the same hour, and each update of a row the transaction already updated walks all its
-- versions (an import's time would grow with the square of its size). `caseload check`
-- compares the table with a recount; `check --repair-figures` rebuilds it. The
-- functions are SECURITY DEFINER: everyday roles read the counts (SELECT) but cannot
-- write them.
CREATE TABLE due_hours (
    queue  TEXT NOT NULL,
    hour   BIGINT NOT NULL,
    shard  INTEGER NOT NULL,
    n      BIGINT NOT NULL,
    PRIMARY KEY (queue, hour, shard)
);

-- A transaction's changes to the counts, until its commit adds them up (empty between
-- transactions).
CREATE TABLE due_changes (
    queue  TEXT NOT NULL,
    hour   BIGINT NOT NULL,
    shard  INTEGER NOT NULL,
    n      INTEGER NOT NULL
);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION caseload_due_change() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_was BIGINT;
            v_now BIGINT;
        BEGIN
            IF TG_OP <> 'INSERT' AND OLD.state = 'open' AND OLD.due_at IS NOT NULL THEN
                v_was := floor(OLD.due_at / 3600000.0);
            END IF;
            IF TG_OP <> 'DELETE' AND NEW.state = 'open' AND NEW.due_at IS NOT NULL THEN
                v_now := floor(NEW.due_at / 3600000.0);
            END IF;
            IF TG_OP = 'UPDATE' AND v_was = v_now AND OLD.queue = NEW.queue THEN
                RETURN NULL;
            END IF;
            IF v_was IS NOT NULL THEN
                INSERT INTO due_changes (queue, hour, shard, n)
                    VALUES (OLD.queue, v_was, OLD.id %% 16, -1);
            END IF;
            IF v_now IS NOT NULL THEN
                INSERT INTO due_changes (queue, hour, shard, n)
                    VALUES (NEW.queue, v_now, NEW.id %% 16, 1);
            END IF;
            RETURN NULL;
        END
        $$ $f$, pinned);
    -- At commit, once per transaction (the first of its deferred calls; the rest find
    -- the transaction's flag set): its changes summed per row, in key order (two
    -- transactions adding up at once take the rows in the same order, so they cannot
    -- deadlock), rows left at 0 deleted. Changes committed without being added up (a
    -- session that forced the deferred triggers early) are taken by the next one.
    EXECUTE format($f$
        CREATE FUNCTION caseload_due_flush() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            r RECORD;
        BEGIN
            IF current_setting('caseload.due_added', true) = 'on' THEN
                RETURN NULL;
            END IF;
            PERFORM set_config('caseload.due_added', 'on', true);
            FOR r IN
                WITH d AS (DELETE FROM due_changes RETURNING queue, hour, shard, n)
                INSERT INTO due_hours (queue, hour, shard, n)
                SELECT queue, hour, shard, sum(n) FROM d GROUP BY queue, hour, shard
                HAVING sum(n) <> 0 ORDER BY queue, hour, shard
                ON CONFLICT (queue, hour, shard) DO UPDATE SET n = due_hours.n + excluded.n
                RETURNING queue, hour, shard, n
            LOOP
                IF r.n = 0 THEN
                    DELETE FROM due_hours
                        WHERE queue = r.queue AND hour = r.hour AND shard = r.shard AND n = 0;
                END IF;
            END LOOP;
            RETURN NULL;
        END
        $$ $f$, pinned);
END
$migrate$;

-- Whoever may read the items may read their due counts (the README's grants, on a
-- database set up before this step): `caseload metrics` keeps working for everyday roles.
DO $grant$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'items'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON due_hours TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$grant$;

-- Only the changes that move an item into, out of or within the counts fire (a claim, a
-- renewal or a note does not).
CREATE TRIGGER items_due_hour_insert AFTER INSERT ON items FOR EACH ROW
    WHEN (NEW.state = 'open' AND NEW.due_at IS NOT NULL)
    EXECUTE FUNCTION caseload_due_change();
CREATE TRIGGER items_due_hour_delete AFTER DELETE ON items FOR EACH ROW
    WHEN (OLD.state = 'open' AND OLD.due_at IS NOT NULL)
    EXECUTE FUNCTION caseload_due_change();
CREATE TRIGGER items_due_hour_update AFTER UPDATE OF state, due_at, queue ON items FOR EACH ROW
    WHEN ((OLD.state = 'open' AND OLD.due_at IS NOT NULL OR NEW.state = 'open' AND NEW.due_at IS NOT NULL)
          AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.due_at IS DISTINCT FROM NEW.due_at
               OR OLD.queue IS DISTINCT FROM NEW.queue))
    EXECUTE FUNCTION caseload_due_change();
CREATE CONSTRAINT TRIGGER due_changes_added_up AFTER INSERT ON due_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    EXECUTE FUNCTION caseload_due_flush();

-- Filled from the items already kept.
INSERT INTO due_hours (queue, hour, shard, n)
SELECT queue, floor(due_at / 3600000.0), id % 16, count(*)
FROM items
WHERE state = 'open' AND due_at IS NOT NULL
GROUP BY 1, 2, 3;
