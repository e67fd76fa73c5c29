-- Never edit: append a new step instead.
-- The figures' day summary: per UTC day (`day`, the day's first millisecond) x queue x
-- holder, what the holds that ended that day add up to, kept by a trigger on `holds` in
-- the transaction of the event that ended the hold. A period's whole UTC days read these
-- rows instead of every hold; its partial days at the edges read `holds` (exact for any
-- time zone). `finishes` lists every finish exactly, one entry "k,at,own,handle,wait,
-- cycle,late;" (k: c completed, f failed; at: milliseconds into the day; late empty
-- without a due time), so medians and percentiles stay exact. A cell is one or more rows
-- (`chunk` 0, 1, …): once a row's list reaches 700 characters the next hold starts a new
-- one, so that keeping a busy person's day rewrites one small row (within one page of the
-- WITHOUT ROWID tree), not a growing one.
CREATE TABLE figure_days (
    day        INTEGER NOT NULL,
    queue      TEXT NOT NULL,
    holder     TEXT NOT NULL,
    chunk      INTEGER NOT NULL,
    holds      INTEGER NOT NULL,
    completed  INTEGER NOT NULL,
    failed     INTEGER NOT NULL,
    skipped    INTEGER NOT NULL,
    released   INTEGER NOT NULL,
    lost       INTEGER NOT NULL,
    held_ms    INTEGER NOT NULL,
    finishes   TEXT NOT NULL,
    PRIMARY KEY (day, queue, holder, chunk)
) WITHOUT ROWID;

CREATE TRIGGER holds_figure_day AFTER INSERT ON holds
BEGIN
    INSERT INTO figure_days (day, queue, holder, chunk, holds, completed, failed, skipped,
                             released, lost, held_ms, finishes)
    VALUES (NEW.ended - (NEW.ended % 86400000 + 86400000) % 86400000, NEW.queue, NEW.holder,
        coalesce((SELECT d.chunk + CASE WHEN length(d.finishes) >= 700 THEN 1 ELSE 0 END
                  FROM figure_days d
                  WHERE d.day = NEW.ended - (NEW.ended % 86400000 + 86400000) % 86400000
                  AND d.queue = NEW.queue AND d.holder = NEW.holder
                  ORDER BY d.chunk DESC LIMIT 1), 0),
        1,
        CASE WHEN NEW.how = 'completed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'failed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'skipped' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'released' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how IN ('expired', 'taken_over', 'unlocked', 'reassigned') THEN 1 ELSE 0 END,
        NEW.ended - NEW.started,
        CASE WHEN NEW.how IN ('completed', 'failed') THEN
            CASE NEW.how WHEN 'completed' THEN 'c' ELSE 'f' END
            || ',' || CAST((NEW.ended % 86400000 + 86400000) % 86400000 AS TEXT)
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
END;

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
    coalesce(group_concat(CASE WHEN how IN ('completed', 'failed') THEN
        CASE how WHEN 'completed' THEN 'c' ELSE 'f' END
        || ',' || CAST((ended % 86400000 + 86400000) % 86400000 AS TEXT)
        || ',' || CAST(own_ms AS TEXT) || ',' || CAST(handle_ms AS TEXT)
        || ',' || CAST(wait_ms AS TEXT) || ',' || CAST(cycle_ms AS TEXT)
        || ',' || coalesce(CAST(late_ms AS TEXT), '') || ';' END, ''), '')
FROM holds
GROUP BY 1, 2, 3;
