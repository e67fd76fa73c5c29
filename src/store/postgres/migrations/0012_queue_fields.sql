-- PostgreSQL schema version 12. Never edit: append a new step instead.
-- Typed fields per queue (verification work): each queue's field definitions in screen
-- order, `spec` the definition as JSON (domain::queue_fields::FieldDef::spec_json).
-- Everyday roles read them; supervisors change them only through the SECURITY DEFINER
-- functions below, which write the audit record ('field') themselves: the server's time
-- and session role, the old definition as they read it (FOR UPDATE) and the new one as
-- they write it. A holder's correction writes a `field_changed` event.

CREATE TABLE queue_fields (
    queue     TEXT NOT NULL REFERENCES queues(name),
    name      TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 40),
    position  BIGINT NOT NULL,
    spec      JSON NOT NULL,
    PRIMARY KEY (queue, name)
);

ALTER TABLE events DROP CONSTRAINT events_kind_check;
ALTER TABLE events ADD CONSTRAINT events_kind_check CHECK (kind IN ('created', 'locked',
    'renewed', 'released', 'expired', 'taken_over', 'completed', 'failed', 'requeued',
    'unlocked', 'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed'));
ALTER TABLE audit DROP CONSTRAINT audit_kind_check;
ALTER TABLE audit ADD CONSTRAINT audit_kind_check
    CHECK (kind IN ('role', 'login', 'queue', 'field'));

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
    r RECORD;
BEGIN
    -- A field's definition as its audit records show it: the spec and its position.
    EXECUTE format($f$
        CREATE FUNCTION caseload_field_json(f queue_fields) RETURNS json
        LANGUAGE sql STABLE %s AS $$
            SELECT (f.spec::jsonb || jsonb_build_object('position', f.position))::json
        $$ $f$, pinned);
    -- Defines or changes field p_name of queue p_queue (p_spec: its definition, checked by
    -- caseload before it gets here); p_order names every field of the queue, p_name
    -- included, in their order on screen (decided by caseload: domain::queue_fields::
    -- reorder). Audited as 'field', subject 'QUEUE.NAME'.
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_field(p_actor TEXT, p_queue TEXT, p_name TEXT,
                                           p_spec TEXT, p_order TEXT[])
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old queue_fields;
            v_new queue_fields;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            PERFORM 1 FROM queues WHERE name = p_queue FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'there is no queue %%', p_queue;
            END IF;
            SELECT * INTO v_old FROM queue_fields WHERE queue = p_queue AND name = p_name
                FOR UPDATE;
            IF array_position(p_order, p_name) IS NULL OR EXISTS (
                SELECT 1 FROM queue_fields WHERE queue = p_queue
                AND array_position(p_order, name) IS NULL) THEN
                RAISE EXCEPTION 'the order of queue %% must name each of its fields', p_queue;
            END IF;
            UPDATE queue_fields SET position = array_position(p_order, name)
                WHERE queue = p_queue AND name <> p_name
                AND position <> array_position(p_order, name);
            INSERT INTO queue_fields (queue, name, position, spec)
                VALUES (p_queue, p_name, array_position(p_order, p_name), p_spec::json)
                ON CONFLICT (queue, name) DO UPDATE SET position = excluded.position,
                    spec = excluded.spec
                RETURNING * INTO v_new;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'field',
                        p_queue || '.' || p_name,
                        CASE WHEN v_old.name IS NULL THEN NULL
                             ELSE caseload_field_json(v_old) END,
                        caseload_field_json(v_new));
        END
        $$ $f$, pinned);
    -- Deletes field p_name of queue p_queue (the items keep their values in params).
    EXECUTE format($f$
        CREATE FUNCTION caseload_delete_field(p_actor TEXT, p_queue TEXT, p_name TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old queue_fields;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            DELETE FROM queue_fields WHERE queue = p_queue AND name = p_name
                RETURNING * INTO v_old;
            IF v_old.name IS NULL THEN
                RAISE EXCEPTION 'queue %% has no field %%', p_queue, p_name;
            END IF;
            UPDATE queue_fields SET position = position - 1
                WHERE queue = p_queue AND position > v_old.position;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'field',
                        p_queue || '.' || p_name, caseload_field_json(v_old),
                        json_build_object('deleted', true));
        END
        $$ $f$, pinned);
    -- A renamed queue's fields go with it; a deleted (empty) queue's go with it.
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION caseload_delete_queue(p_actor TEXT, p_name TEXT,
                                                         p_renamed_to TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old json;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            SELECT caseload_queue_json(q) INTO v_old FROM queues q WHERE q.name = p_name
                FOR UPDATE;
            IF v_old IS NULL THEN
                RAISE EXCEPTION 'there is no queue %%', p_name;
            END IF;
            IF EXISTS (SELECT 1 FROM items WHERE queue = p_name) THEN
                RAISE EXCEPTION 'queue %% still holds items; only an empty queue can be deleted',
                    p_name;
            END IF;
            IF p_renamed_to IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM queues WHERE name = p_renamed_to) THEN
                RAISE EXCEPTION 'queue %% was not renamed to %%', p_name, p_renamed_to;
            END IF;
            IF p_renamed_to IS NOT NULL THEN
                UPDATE queue_fields SET queue = p_renamed_to WHERE queue = p_name;
            ELSE
                DELETE FROM queue_fields WHERE queue = p_name;
            END IF;
            DELETE FROM item_counts WHERE queue = p_name;
            DELETE FROM queues WHERE name = p_name;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        CASE WHEN p_renamed_to IS NULL THEN json_build_object('deleted', true)
                             ELSE json_build_object('renamed_to', p_renamed_to) END);
        END
        $$ $f$, pinned);
    -- Every role that may read the queues may read their fields.
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'queues'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON queue_fields TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$migrate$;
