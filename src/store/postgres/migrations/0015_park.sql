-- PostgreSQL schema version 15. Never edit: append a new step instead.
-- Parking (a call-back): an item parked by its holder is in state 'parked', without a
-- lock, until `parked_until`; only `parked_by` may take it until then and for the grace
-- after (src/store/ops/park.rs). New event kinds: `parked`, `woke`, `undone`. A park ends a
-- hold as a release does (parked time is nobody's handle time); an undo gives the lock
-- back as a take does.
ALTER TABLE items ADD COLUMN parked_until BIGINT NULL;
ALTER TABLE items ADD COLUMN parked_by TEXT NULL;
ALTER TABLE items ADD COLUMN park_reason TEXT NULL;
ALTER TABLE items DROP CONSTRAINT items_state_check;
ALTER TABLE items ADD CONSTRAINT items_state_check
    CHECK (state IN ('open', 'done', 'failed', 'cancelled', 'parked'));

-- Parked items by wake time: an owner's woken items, the grace's return to the pool.
CREATE INDEX items_parked ON items (parked_until) WHERE state = 'parked';

ALTER TABLE events DROP CONSTRAINT events_kind_check;
ALTER TABLE events ADD CONSTRAINT events_kind_check CHECK (kind IN ('created', 'locked',
    'renewed', 'released', 'expired', 'taken_over', 'completed', 'failed', 'requeued',
    'unlocked', 'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
    'undone'));

CREATE OR REPLACE FUNCTION caseload_hold_end() RETURNS trigger LANGUAGE plpgsql AS $$
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
    RETURN NULL;
END
$$;

DROP TRIGGER events_hold_end ON events;
CREATE TRIGGER events_hold_end AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over',
                       'unlocked', 'reassigned', 'cancelled', 'parked'))
    EXECUTE FUNCTION caseload_hold_end();

-- CREATE OR REPLACE resets what the function was given besides its body: it writes the
-- holds as their owner again (see 0010).
DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format('ALTER FUNCTION caseload_hold_end() SECURITY DEFINER %s', pinned);
END
$migrate$;
