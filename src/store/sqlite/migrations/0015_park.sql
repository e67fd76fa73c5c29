-- SQLite schema version 15. Never edit: append a new step instead.
-- Parking (a call-back): an item parked by its holder is in state 'parked', without a
-- lock, until `parked_until`; only `parked_by` may take it until then and for the grace
-- after (src/store/ops/park.rs). New event kinds: `parked`, `woke`, `undone`.
--
-- The state's CHECK gains 'parked'. SQLite cannot change a CHECK in place; widening one
-- changes nothing stored, so the table's text in sqlite_schema is edited (the procedure
-- SQLite's documentation gives for such changes) instead of rebuilding the largest table.
-- The ALTERs above it have moved the schema cookie, so every connection reads the new text;
-- RESET makes this one read it again too.
ALTER TABLE items ADD COLUMN parked_until INTEGER NULL;
ALTER TABLE items ADD COLUMN parked_by TEXT NULL;
ALTER TABLE items ADD COLUMN park_reason TEXT NULL;
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, '''cancelled''))', '''cancelled'', ''parked''))')
WHERE type = 'table' AND name = 'items';
PRAGMA writable_schema = RESET;

-- Parked items by wake time: an owner's woken items, the grace's return to the pool.
CREATE INDEX items_parked ON items (parked_until) WHERE state = 'parked';

-- A park ends a hold as a release does (parked time is nobody's handle time); an undo
-- gives the lock back as a take does.
DROP TRIGGER events_hold_end;
CREATE TRIGGER events_hold_end AFTER INSERT ON events
WHEN NEW.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over',
                  'unlocked', 'reassigned', 'cancelled', 'parked')
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
          AND e.kind IN ('locked', 'taken_over', 'reassigned', 'undone')
          ORDER BY e.id DESC LIMIT 1) AS s
    JOIN items i ON i.id = NEW.item_id
    WHERE s.holder IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM events x WHERE x.item_id = NEW.item_id AND x.id > s.id AND x.id < NEW.id
        AND x.kind IN ('locked', 'taken_over', 'expired', 'unlocked', 'reassigned',
                       'released', 'skipped', 'completed', 'failed', 'cancelled', 'parked',
                       'undone'));
END;

DROP TRIGGER events_kind_known;
CREATE TRIGGER events_kind_known BEFORE INSERT ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
             'undone') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
DROP TRIGGER events_kind_kept;
CREATE TRIGGER events_kind_kept BEFORE UPDATE OF kind ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
             'undone') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
