-- PostgreSQL schema version 20. Never edit: append a new step instead.
-- Four eyes (issue 29 §1): a queue reviews a share of its completions (`review_percent`,
-- 0 none to 100 all, chosen by a hash of queue and id: domain::review) and each person's
-- first `review_new` completions in it. Such a completion puts the item into the new state
-- 'review' (its `completed` event, then `submitted`): the maker's hold ends there and
-- counts as their completion. A second person takes it under a lock as any item
-- (src/store/ops/review.rs) and accepts it (`accepted`: done) or rejects it (`rejected`,
-- then an assignment back to the maker). The queue function takes the two settings (its
-- old form is dropped) and the audit's JSON of a queue's settings shows them.
ALTER TABLE queues ADD COLUMN review_percent BIGINT NOT NULL DEFAULT 0
    CHECK (review_percent BETWEEN 0 AND 100);
ALTER TABLE queues ADD COLUMN review_new BIGINT NOT NULL DEFAULT 0
    CHECK (review_new BETWEEN 0 AND 1000);

ALTER TABLE items DROP CONSTRAINT items_state_check;
ALTER TABLE items ADD CONSTRAINT items_state_check
    CHECK (state IN ('open', 'done', 'failed', 'cancelled', 'parked', 'review'));
-- A review item carries its reviewer's lock (the unnamed CHECK of 0001 was items_check1).
ALTER TABLE items DROP CONSTRAINT items_check1;
ALTER TABLE items ADD CONSTRAINT items_lock_state_check
    CHECK (state IN ('open', 'review') OR lock_user IS NULL);

-- Items waiting for review, oldest submission first: the reviewer's take, the backlog.
CREATE INDEX items_review ON items (queue, finished_at, id) WHERE state = 'review';

ALTER TABLE events DROP CONSTRAINT events_kind_check;
ALTER TABLE events ADD CONSTRAINT events_kind_check CHECK (kind IN ('created', 'locked',
    'renewed', 'released', 'expired', 'taken_over', 'completed', 'failed', 'requeued',
    'unlocked', 'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
    'undone', 'submitted', 'accepted', 'rejected'));

-- An accept or a reject ends the reviewer's hold (not recorded: the maker's completion
-- is the item's figure), so the assignment back to the maker starts a new one.
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
                       'undone', 'accepted', 'rejected'));
    RETURN NULL;
END
$$;


-- CREATE OR REPLACE resets what the function was given besides its body: it writes the
-- holds as their owner again (see 0010).
DROP FUNCTION caseload_set_queue(TEXT, TEXT, BIGINT, BIGINT, BIGINT, BOOLEAN, TEXT, TEXT,
                                 BIGINT, BIGINT);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format('ALTER FUNCTION caseload_hold_end() SECURITY DEFINER %s', pinned);
    -- A queue's settings as its audit records show them (store/ops/supervise.rs's
    -- settings_json, which the SQLite store writes; a test compares the two).
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION caseload_queue_json(q queues) RETURNS json
        LANGUAGE sql STABLE %s AS $$
            SELECT json_build_object('lock_seconds', q.lock_seconds,
                                     'warn_seconds', q.warn_seconds,
                                     'max_per_user', q.max_per_user, 'paused', q.paused,
                                     'order', q.take_order,
                                     'park_grace_seconds', q.park_grace_seconds,
                                     'undo_seconds', q.undo_seconds,
                                     'review_percent', q.review_percent,
                                     'review_new', q.review_new)
        $$ $f$, pinned);
    -- Creates or changes queue p_name; p_renamed_from names the queue it is the new name
    -- of (which must exist, while p_name must not).
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_queue(p_actor TEXT, p_name TEXT, p_lock BIGINT,
                                           p_warn BIGINT, p_max BIGINT, p_paused BOOLEAN,
                                           p_order TEXT, p_renamed_from TEXT,
                                           p_grace BIGINT, p_undo BIGINT,
                                           p_review BIGINT, p_review_new BIGINT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old json;
            v_new queues;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            SELECT caseload_queue_json(q) INTO v_old FROM queues q WHERE q.name = p_name
                FOR UPDATE;
            IF p_renamed_from IS NOT NULL THEN
                IF v_old IS NOT NULL OR NOT EXISTS (SELECT 1 FROM queues
                                                    WHERE name = p_renamed_from) THEN
                    RAISE EXCEPTION 'queue %% cannot be renamed to %%', p_renamed_from, p_name;
                END IF;
                v_old := json_build_object('renamed_from', p_renamed_from);
            END IF;
            INSERT INTO queues (name, lock_seconds, warn_seconds, max_per_user, paused,
                                take_order, park_grace_seconds, undo_seconds,
                                review_percent, review_new)
                VALUES (p_name, p_lock, p_warn, p_max, p_paused, p_order, p_grace, p_undo,
                        p_review, p_review_new)
                ON CONFLICT (name) DO UPDATE SET lock_seconds = excluded.lock_seconds,
                    warn_seconds = excluded.warn_seconds,
                    max_per_user = excluded.max_per_user, paused = excluded.paused,
                    take_order = excluded.take_order,
                    park_grace_seconds = excluded.park_grace_seconds,
                    undo_seconds = excluded.undo_seconds,
                    review_percent = excluded.review_percent,
                    review_new = excluded.review_new
                RETURNING * INTO v_new;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        caseload_queue_json(v_new));
        END
        $$ $f$, pinned);
END
$migrate$;
