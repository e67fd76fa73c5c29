-- SQLite schema version 20. Never edit: append a new step instead.
-- Four eyes (issue 29 §1): a queue reviews a share of its completions (`review_percent`,
-- 0 none to 100 all, chosen by a hash of queue and id: domain::review) and each person's
-- first `review_new` completions in it. Such a completion puts the item into the new state
-- 'review' (its `completed` event, then `submitted`): the maker's hold ends there and
-- counts as their completion. A second person takes it under a lock as any item
-- (src/store/ops/review.rs) and accepts it (`accepted`: done) or rejects it (`rejected`,
-- then an assignment back to the maker).
ALTER TABLE queues ADD COLUMN review_percent INTEGER NOT NULL DEFAULT 0
    CHECK (review_percent BETWEEN 0 AND 100);
ALTER TABLE queues ADD COLUMN review_new INTEGER NOT NULL DEFAULT 0
    CHECK (review_new BETWEEN 0 AND 1000);

-- The state's CHECK gains 'review', and a review item carries its reviewer's lock: the
-- table's text is edited in place as 0015 did (the ALTERs above moved the schema cookie).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(replace(sql,
    '''cancelled'', ''parked''))', '''cancelled'', ''parked'', ''review''))'),
    'CHECK (state = ''open'' OR lock_user IS NULL)',
    'CHECK (state IN (''open'', ''review'') OR lock_user IS NULL)')
WHERE type = 'table' AND name = 'items';
PRAGMA writable_schema = RESET;

-- Items waiting for review, oldest submission first: the reviewer's take, the backlog.
CREATE INDEX items_review ON items (queue, finished_at, id) WHERE state = 'review';

-- An accept or a reject ends the reviewer's hold (not recorded: the maker's completion
-- is the item's figure), so the assignment back to the maker starts a new one.
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
                       'undone', 'accepted', 'rejected'));
END;

DROP TRIGGER events_kind_known;
CREATE TRIGGER events_kind_known BEFORE INSERT ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
             'undone', 'submitted', 'accepted', 'rejected') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
DROP TRIGGER events_kind_kept;
CREATE TRIGGER events_kind_kept BEFORE UPDATE OF kind ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
             'undone', 'submitted', 'accepted', 'rejected') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
