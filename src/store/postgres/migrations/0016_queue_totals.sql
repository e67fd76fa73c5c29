-- PostgreSQL schema version 16. Never edit: append a new step instead.
-- Totals per queue since the database began, for `caseload metrics` (a monitoring system
-- reads them every 15 s): the holds ended, how many of them completed or failed their item,
-- and the time they lasted. Kept by a trigger on `holds` in the transaction of the event
-- that ended the hold, so the counters never go down and are read from a few rows per queue
-- instead of summing the day summary. Each queue's totals are spread over up to 64 rows
-- (`shard`, as `item_counts`), so that concurrent finishes in one queue do not wait on one
-- row; a reader sums them. `caseload check` compares them with the holds;
-- `check --repair-figures` rebuilds them with the holds. The trigger's function is
-- SECURITY DEFINER: everyday roles read the totals (SELECT) but cannot write them.
CREATE TABLE queue_totals (
    queue      TEXT NOT NULL,
    shard      INTEGER NOT NULL,
    holds      BIGINT NOT NULL,
    completed  BIGINT NOT NULL,
    failed     BIGINT NOT NULL,
    held_ms    BIGINT NOT NULL,
    PRIMARY KEY (queue, shard)
);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION caseload_queue_total() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            INSERT INTO queue_totals (queue, shard, holds, completed, failed, held_ms)
            VALUES (NEW.queue, floor(random() * 64)::integer, 1,
                CASE WHEN NEW.how = 'completed' THEN 1 ELSE 0 END,
                CASE WHEN NEW.how = 'failed' THEN 1 ELSE 0 END,
                NEW.ended - NEW.started)
            ON CONFLICT (queue, shard) DO UPDATE SET
                holds = queue_totals.holds + 1,
                completed = queue_totals.completed + excluded.completed,
                failed = queue_totals.failed + excluded.failed,
                held_ms = queue_totals.held_ms + excluded.held_ms;
            RETURN NULL;
        END
        $$ $f$, pinned);
END
$migrate$;

-- Whoever may read the holds may read their totals (the README's grants, on a database
-- set up before this step): `caseload metrics` keeps working for everyday roles.
DO $grant$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'holds'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON queue_totals TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$grant$;

CREATE TRIGGER holds_queue_total AFTER INSERT ON holds FOR EACH ROW
    EXECUTE FUNCTION caseload_queue_total();

-- Filled from the holds already kept.
INSERT INTO queue_totals (queue, shard, holds, completed, failed, held_ms)
SELECT queue, 0, count(*),
    sum(CASE WHEN how = 'completed' THEN 1 ELSE 0 END),
    sum(CASE WHEN how = 'failed' THEN 1 ELSE 0 END),
    sum(ended - started)
FROM holds
GROUP BY queue;

-- The held locks by queue with their lock time, read from the index alone (the holder is
-- in it so that SQLite needs no table row): each queue's held, expired and assigned counts.
CREATE INDEX items_held ON items (queue, lock_time, lock_user) WHERE lock_user IS NOT NULL;
