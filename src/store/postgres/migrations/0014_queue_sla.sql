-- PostgreSQL schema version 14. Never edit: append a new step instead.
-- Service levels on business hours: a queue's SLA (working time, in milliseconds), its
-- working hours, time zone (IANA) and holidays (dates, one per line) (domain::sla).
-- Everyday roles read them; supervisors change them only through the SECURITY DEFINER
-- function below, which writes the audit record ('queue', its sla before and after). A
-- renamed queue's SLA goes with it; a deleted (empty) queue's goes with it.

CREATE TABLE queue_sla (
    queue     TEXT PRIMARY KEY REFERENCES queues(name),
    sla_ms    BIGINT NOT NULL CHECK (sla_ms > 0),
    hours     TEXT NOT NULL,
    tz        TEXT NOT NULL,
    holidays  TEXT NOT NULL DEFAULT ''
);

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
    r RECORD;
BEGIN
    -- Sets queue p_queue's SLA (p_sla_ms NULL removes it; the rest checked by caseload
    -- before it gets here). Audited as 'queue', its sla before and after.
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_sla(p_actor TEXT, p_queue TEXT, p_sla_ms BIGINT,
                                         p_hours TEXT, p_tz TEXT, p_holidays TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old queue_sla;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            PERFORM 1 FROM queues WHERE name = p_queue FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'there is no queue %%', p_queue;
            END IF;
            SELECT * INTO v_old FROM queue_sla WHERE queue = p_queue FOR UPDATE;
            IF p_sla_ms IS NULL THEN
                DELETE FROM queue_sla WHERE queue = p_queue;
            ELSE
                INSERT INTO queue_sla (queue, sla_ms, hours, tz, holidays)
                    VALUES (p_queue, p_sla_ms, p_hours, p_tz, p_holidays)
                    ON CONFLICT (queue) DO UPDATE SET sla_ms = excluded.sla_ms,
                        hours = excluded.hours, tz = excluded.tz,
                        holidays = excluded.holidays;
            END IF;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_queue,
                        json_build_object('sla', CASE WHEN v_old.queue IS NULL THEN NULL
                            ELSE json_build_object('sla_ms', v_old.sla_ms,
                                'hours', v_old.hours, 'tz', v_old.tz,
                                'holidays', v_old.holidays) END),
                        json_build_object('sla', CASE WHEN p_sla_ms IS NULL THEN NULL
                            ELSE json_build_object('sla_ms', p_sla_ms, 'hours', p_hours,
                                'tz', p_tz, 'holidays', p_holidays) END));
        END
        $$ $f$, pinned);
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
                UPDATE queue_texts SET queue = p_renamed_to WHERE queue = p_name;
                UPDATE queue_sla SET queue = p_renamed_to WHERE queue = p_name;
            ELSE
                DELETE FROM queue_fields WHERE queue = p_name;
                DELETE FROM queue_texts WHERE queue = p_name;
                DELETE FROM queue_sla WHERE queue = p_name;
            END IF;
            DELETE FROM item_counts WHERE queue = p_name;
            DELETE FROM queues WHERE name = p_name;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        CASE WHEN p_renamed_to IS NULL THEN json_build_object('deleted', true)
                             ELSE json_build_object('renamed_to', p_renamed_to) END);
        END
        $$ $f$, pinned);
    -- Every role that may read the queues may read their SLAs.
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'queues'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON queue_sla TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$migrate$;
