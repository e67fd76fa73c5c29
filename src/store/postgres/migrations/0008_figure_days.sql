-- PostgreSQL schema version 8. Never edit: append a new step instead.
-- The figures' day summary: per UTC day (`day`, the day's first millisecond) x queue x
-- holder, what the holds that ended that day add up to, kept by a trigger on `holds` in
-- the transaction of the event that ended the hold. A period's whole UTC days read these
-- rows instead of every hold; its partial days at the edges read `holds` (exact for any
-- time zone). `finishes` lists every finish exactly, one entry "k,at,own,handle,wait,
-- cycle,late;" (k: c completed, f failed; at: milliseconds into the day; late empty
-- without a due time), so medians and percentiles stay exact. A cell is one or more rows
-- (`chunk` 0, 1, …): once a row's list reaches 700 characters the next hold starts a new
-- one, so that keeping a busy person's day rewrites one small row, not a growing one.
-- The trigger's function is SECURITY DEFINER: everyday roles read the summary (SELECT)
-- but cannot write it.
CREATE TABLE figure_days (
    day        BIGINT NOT NULL,
    queue      TEXT NOT NULL,
    holder     TEXT NOT NULL,
    chunk      BIGINT NOT NULL,
    holds      BIGINT NOT NULL,
    completed  BIGINT NOT NULL,
    failed     BIGINT NOT NULL,
    skipped    BIGINT NOT NULL,
    released   BIGINT NOT NULL,
    lost       BIGINT NOT NULL,
    held_ms    BIGINT NOT NULL,
    finishes   TEXT NOT NULL,
    PRIMARY KEY (day, queue, holder, chunk)
);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION caseload_figure_day() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            INSERT INTO figure_days (day, queue, holder, chunk, holds, completed, failed,
                                     skipped, released, lost, held_ms, finishes)
            VALUES (NEW.ended - (NEW.ended %% 86400000 + 86400000) %% 86400000, NEW.queue,
                NEW.holder,
                coalesce((SELECT d.chunk + CASE WHEN length(d.finishes) >= 700 THEN 1 ELSE 0 END
                          FROM figure_days d
                          WHERE d.day = NEW.ended - (NEW.ended %% 86400000 + 86400000) %% 86400000
                          AND d.queue = NEW.queue AND d.holder = NEW.holder
                          ORDER BY d.chunk DESC LIMIT 1), 0),
                1,
                CASE WHEN NEW.how = 'completed' THEN 1 ELSE 0 END,
                CASE WHEN NEW.how = 'failed' THEN 1 ELSE 0 END,
                CASE WHEN NEW.how = 'skipped' THEN 1 ELSE 0 END,
                CASE WHEN NEW.how = 'released' THEN 1 ELSE 0 END,
                CASE WHEN NEW.how IN ('expired', 'taken_over', 'unlocked', 'reassigned')
                    THEN 1 ELSE 0 END,
                NEW.ended - NEW.started,
                CASE WHEN NEW.how IN ('completed', 'failed') THEN
                    CASE NEW.how WHEN 'completed' THEN 'c' ELSE 'f' END
                    || ',' || CAST((NEW.ended %% 86400000 + 86400000) %% 86400000 AS TEXT)
                    || ',' || CAST(NEW.own_ms AS TEXT) || ',' || CAST(NEW.handle_ms AS TEXT)
                    || ',' || CAST(NEW.wait_ms AS TEXT) || ',' || CAST(NEW.cycle_ms AS TEXT)
                    || ',' || coalesce(CAST(NEW.late_ms AS TEXT), '') || ';'
                ELSE '' END)
            ON CONFLICT (day, queue, holder, chunk) DO UPDATE SET
                holds = figure_days.holds + 1,
                completed = figure_days.completed + excluded.completed,
                failed = figure_days.failed + excluded.failed,
                skipped = figure_days.skipped + excluded.skipped,
                released = figure_days.released + excluded.released,
                lost = figure_days.lost + excluded.lost,
                held_ms = figure_days.held_ms + excluded.held_ms,
                finishes = figure_days.finishes || excluded.finishes;
            RETURN NULL;
        END
        $$ $f$, pinned);
END
$migrate$;

-- Whoever may read the holds may read their summary (the README's grants, on a database
-- set up before this step): the figures keep working for everyday roles after upgrading.
DO $grant$
DECLARE
    r RECORD;
BEGIN
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'holds'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON figure_days TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$grant$;

CREATE TRIGGER holds_figure_day AFTER INSERT ON holds FOR EACH ROW
    EXECUTE FUNCTION caseload_figure_day();

-- Filled from the holds already kept.
INSERT INTO figure_days (day, queue, holder, chunk, holds, completed, failed, skipped,
                         released, lost, held_ms, finishes)
SELECT ended - (ended % 86400000 + 86400000) % 86400000, queue, holder, 0, count(*),
    sum(CASE WHEN how = 'completed' THEN 1 ELSE 0 END),
    sum(CASE WHEN how = 'failed' THEN 1 ELSE 0 END),
    sum(CASE WHEN how = 'skipped' THEN 1 ELSE 0 END),
    sum(CASE WHEN how = 'released' THEN 1 ELSE 0 END),
    sum(CASE WHEN how IN ('expired', 'taken_over', 'unlocked', 'reassigned') THEN 1 ELSE 0 END),
    sum(ended - started),
    coalesce(string_agg(CASE WHEN how IN ('completed', 'failed') THEN
        CASE how WHEN 'completed' THEN 'c' ELSE 'f' END
        || ',' || CAST((ended % 86400000 + 86400000) % 86400000 AS TEXT)
        || ',' || CAST(own_ms AS TEXT) || ',' || CAST(handle_ms AS TEXT)
        || ',' || CAST(wait_ms AS TEXT) || ',' || CAST(cycle_ms AS TEXT)
        || ',' || coalesce(CAST(late_ms AS TEXT), '') || ';' END, ''), '')
FROM holds
GROUP BY 1, 2, 3;
