-- PostgreSQL schema version 17. Never edit: append a new step instead.
-- Two queue settings that were constants: how long a woken park waits for its owner
-- before it returns to the pool (1 h before), and how long after a complete, fail,
-- release, skip or park its maker may undo it (30 s before; 0: no undo). The queue
-- function takes them (its old form is dropped) and the audit's JSON of a queue's
-- settings shows them, with the take order.
ALTER TABLE queues ADD COLUMN park_grace_seconds BIGINT NOT NULL DEFAULT 3600
    CHECK (park_grace_seconds BETWEEN 60 AND 604800);
ALTER TABLE queues ADD COLUMN undo_seconds BIGINT NOT NULL DEFAULT 30
    CHECK (undo_seconds BETWEEN 0 AND 3600);
DROP FUNCTION caseload_set_queue(TEXT, TEXT, BIGINT, BIGINT, BIGINT, BOOLEAN, TEXT, TEXT);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
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
                                     'undo_seconds', q.undo_seconds)
        $$ $f$, pinned);
    -- Creates or changes queue p_name; p_renamed_from names the queue it is the new name
    -- of (which must exist, while p_name must not).
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_queue(p_actor TEXT, p_name TEXT, p_lock BIGINT,
                                           p_warn BIGINT, p_max BIGINT, p_paused BOOLEAN,
                                           p_order TEXT, p_renamed_from TEXT,
                                           p_grace BIGINT, p_undo BIGINT)
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
                                take_order, park_grace_seconds, undo_seconds)
                VALUES (p_name, p_lock, p_warn, p_max, p_paused, p_order, p_grace, p_undo)
                ON CONFLICT (name) DO UPDATE SET lock_seconds = excluded.lock_seconds,
                    warn_seconds = excluded.warn_seconds,
                    max_per_user = excluded.max_per_user, paused = excluded.paused,
                    take_order = excluded.take_order,
                    park_grace_seconds = excluded.park_grace_seconds,
                    undo_seconds = excluded.undo_seconds
                RETURNING * INTO v_new;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        caseload_queue_json(v_new));
        END
        $$ $f$, pinned);
END
$migrate$;
