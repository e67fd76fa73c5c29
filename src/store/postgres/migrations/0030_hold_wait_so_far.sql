-- PostgreSQL schema version 30. Never edit: append a new step instead.
-- A finish's wait (creation to the first hold) counts to the earliest start of the item's
-- holds up to and including the one it ends. A take is stamped with its transaction's
-- start, which can come before the previous holder's release commits, so its hold can
-- start before the hold it follows; the trigger left out the ending hold's own start then,
-- while `check` took the earliest of all the item's holds, and the two disagreed (the
-- 20-minute soak at seed 7401: event #10643). Both now take the earliest so far, as on
-- SQLite (store::sql::EXPECTED_HOLDS, domain::figures::records).
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
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN least(coalesce((
            SELECT min(h.started) FROM holds h WHERE h.item_id = NEW.item_id), s.at), s.at)
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
                       'undone', 'accepted', 'rejected'));
    RETURN NULL;
END
$$;

-- CREATE OR REPLACE resets what the function was given besides its body: it writes the
-- holds as their owner again (see 0010).
DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format('ALTER FUNCTION caseload_hold_end() SECURITY DEFINER %s', pinned);
END
$migrate$;
