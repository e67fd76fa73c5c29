-- Holds: the spans people held items, kept by a trigger for the supervisors' figures
-- (see schema.sql), and filled here from the history the events already tell.
CREATE TABLE holds (
    ended      INTEGER NOT NULL,
    event_id   INTEGER NOT NULL,
    item_id    INTEGER NOT NULL,
    queue      TEXT NOT NULL,
    holder     TEXT NOT NULL,
    started    INTEGER NOT NULL,
    how        TEXT NOT NULL,
    -- Set on a finish (how is completed or failed), else NULL.
    handle_ms  INTEGER NULL,
    own_ms     INTEGER NULL,
    wait_ms    INTEGER NULL,
    cycle_ms   INTEGER NULL,
    late_ms    INTEGER NULL,
    PRIMARY KEY (ended, event_id)
) WITHOUT ROWID;
CREATE INDEX holds_item ON holds (item_id, event_id);

-- Open items with a due time by queue: each queue's overdue and due-soon counts.
CREATE INDEX items_queue_due ON items (queue, due_at) WHERE state = 'open' AND due_at IS NOT NULL;

-- The hold an event ends: the item's last lock-giving event before it, when no event that
-- ends a hold came in between. A finish adds the item's figures: every hold since its
-- previous finish (handle), the finisher's share (own), creation to its first hold (wait)
-- and to now (cycle), and the finish minus the due time (late).
CREATE TRIGGER events_hold_end AFTER INSERT ON events
WHEN NEW.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over',
                  'unlocked', 'reassigned', 'cancelled')
BEGIN
    INSERT INTO holds (ended, event_id, item_id, queue, holder, started, how,
                       handle_ms, own_ms, wait_ms, cycle_ms, late_ms)
    SELECT NEW.at, NEW.id, NEW.item_id, i.queue, s.holder, s.at, NEW.kind,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN NEW.at - s.at + coalesce((
            SELECT sum(h.ended - h.started) FROM holds h WHERE h.item_id = NEW.item_id
            AND h.event_id > coalesce((SELECT max(f.event_id) FROM holds f
                WHERE f.item_id = NEW.item_id AND f.how IN ('completed', 'failed')), 0)), 0) END,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN NEW.at - s.at + coalesce((
            SELECT sum(h.ended - h.started) FROM holds h WHERE h.item_id = NEW.item_id
            AND h.holder = s.holder
            AND h.event_id > coalesce((SELECT max(f.event_id) FROM holds f
                WHERE f.item_id = NEW.item_id AND f.how IN ('completed', 'failed')), 0)), 0) END,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN coalesce((
            SELECT min(h.started) FROM holds h WHERE h.item_id = NEW.item_id), s.at)
            - i.created_at END,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN NEW.at - i.created_at END,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN NEW.at - i.due_at END
    FROM (SELECT e.id, e.at,
                 CASE e.kind WHEN 'reassigned' THEN e.detail ->> 'to' ELSE e.actor END AS holder
          FROM events e WHERE e.item_id = NEW.item_id AND e.id < NEW.id
          AND e.kind IN ('locked', 'taken_over', 'reassigned')
          ORDER BY e.id DESC LIMIT 1) AS s
    JOIN items i ON i.id = NEW.item_id
    WHERE s.holder IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM events x WHERE x.item_id = NEW.item_id AND x.id > s.id AND x.id < NEW.id
        AND x.kind IN ('locked', 'taken_over', 'expired', 'unlocked', 'reassigned',
                       'released', 'skipped', 'completed', 'failed', 'cancelled'));
END;

WITH marks AS (
    SELECT id, item_id, at, kind,
        max(CASE WHEN kind IN ('locked', 'taken_over', 'reassigned') THEN id END) OVER w
            AS take_id,
        max(CASE WHEN kind IN ('locked', 'taken_over', 'expired', 'unlocked', 'reassigned',
                               'released', 'skipped', 'completed', 'failed', 'cancelled')
            THEN id END) OVER w AS end_id
    FROM events
    WINDOW w AS (PARTITION BY item_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), base AS (
    SELECT m.at AS ended, m.id AS event_id, m.item_id, i.queue,
        CASE s.kind WHEN 'reassigned' THEN s.detail ->> 'to' ELSE s.actor END AS holder,
        s.at AS started, m.kind AS how, i.created_at, i.due_at
    FROM marks m JOIN events s ON s.id = m.take_id JOIN items i ON i.id = m.item_id
    WHERE m.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over',
                     'unlocked', 'reassigned', 'cancelled')
    AND (m.end_id IS NULL OR m.end_id <= m.take_id)
), kept AS (
    SELECT * FROM base WHERE holder IS NOT NULL
), rounds AS (
    SELECT k.*,
        count(CASE WHEN how IN ('completed', 'failed') THEN 1 END) OVER (PARTITION BY item_id
            ORDER BY event_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS round,
        min(started) OVER (PARTITION BY item_id) AS first_start
    FROM kept k
)
INSERT INTO holds (ended, event_id, item_id, queue, holder, started, how,
                   handle_ms, own_ms, wait_ms, cycle_ms, late_ms)
SELECT ended, event_id, item_id, queue, holder, started, how,
    CASE WHEN how IN ('completed', 'failed')
        THEN sum(ended - started) OVER (PARTITION BY item_id, round) END,
    CASE WHEN how IN ('completed', 'failed')
        THEN sum(ended - started) OVER (PARTITION BY item_id, round, holder) END,
    CASE WHEN how IN ('completed', 'failed') THEN first_start - created_at END,
    CASE WHEN how IN ('completed', 'failed') THEN ended - created_at END,
    CASE WHEN how IN ('completed', 'failed') THEN ended - due_at END
FROM rounds;
