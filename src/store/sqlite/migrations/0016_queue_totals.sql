-- SQLite schema version 16. Never edit: append a new step instead.
-- Totals per queue since the database began, for `caseload metrics` (a monitoring system
-- reads them every 15 s): the holds ended, how many of them completed or failed their item,
-- and the time they lasted. Kept by a trigger on `holds` in the transaction of the event
-- that ended the hold, so the counters never go down and are read from one row per queue
-- instead of summing the day summary. `caseload check` compares them with the holds;
-- `check --repair-figures` rebuilds them with the holds.
CREATE TABLE queue_totals (
    queue      TEXT PRIMARY KEY NOT NULL,
    holds      INTEGER NOT NULL,
    completed  INTEGER NOT NULL,
    failed     INTEGER NOT NULL,
    held_ms    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER holds_queue_total AFTER INSERT ON holds
BEGIN
    INSERT INTO queue_totals (queue, holds, completed, failed, held_ms)
    VALUES (NEW.queue, 1,
        CASE WHEN NEW.how = 'completed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'failed' THEN 1 ELSE 0 END,
        NEW.ended - NEW.started)
    ON CONFLICT (queue) DO UPDATE SET
        holds = queue_totals.holds + 1,
        completed = queue_totals.completed + excluded.completed,
        failed = queue_totals.failed + excluded.failed,
        held_ms = queue_totals.held_ms + excluded.held_ms;
END;

-- Filled from the holds already kept.
INSERT INTO queue_totals (queue, holds, completed, failed, held_ms)
SELECT queue, count(*),
    sum(CASE WHEN how = 'completed' THEN 1 ELSE 0 END),
    sum(CASE WHEN how = 'failed' THEN 1 ELSE 0 END),
    sum(ended - started)
FROM holds
GROUP BY queue;

-- The held locks by queue with their lock time, read from the index alone (the holder is
-- in it so that SQLite needs no table row): each queue's held, expired and assigned counts.
CREATE INDEX items_held ON items (queue, lock_time, lock_user) WHERE lock_user IS NOT NULL;
