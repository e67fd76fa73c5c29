-- PostgreSQL schema version 13. Never edit: append a new step instead.
-- Ready-made texts per queue (results, fail/skip/release/park reasons, comments), each
-- under a code unique within its queue that the event keeps when a holder chooses it.
-- Everyday roles read them; supervisors change them only through the SECURITY DEFINER
-- functions below, which write the audit record ('text', subject QUEUE.CODE) themselves.
-- A renamed queue's texts go with it; a deleted (empty) queue's go with it.

CREATE TABLE queue_texts (
    queue    TEXT NOT NULL REFERENCES queues(name),
    code     TEXT NOT NULL CHECK (char_length(code) BETWEEN 1 AND 32),
    purpose  TEXT NOT NULL CHECK (purpose IN ('result', 'fail', 'skip', 'release', 'park',
                                              'comment')),
    text     TEXT NOT NULL CHECK (char_length(text) BETWEEN 1 AND 200),
    PRIMARY KEY (queue, code)
);

ALTER TABLE audit DROP CONSTRAINT audit_kind_check;
ALTER TABLE audit ADD CONSTRAINT audit_kind_check
    CHECK (kind IN ('role', 'login', 'queue', 'field', 'text'));

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
    r RECORD;
BEGIN
    -- Adds ready-made text p_code of queue p_queue, or changes its text or purpose
    -- (checked by caseload before it gets here). Audited as 'text', subject 'QUEUE.CODE'.
    EXECUTE format($f$
        CREATE FUNCTION caseload_put_text(p_actor TEXT, p_queue TEXT, p_code TEXT,
                                          p_purpose TEXT, p_text TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old queue_texts;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            PERFORM 1 FROM queues WHERE name = p_queue FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'there is no queue %%', p_queue;
            END IF;
            SELECT * INTO v_old FROM queue_texts WHERE queue = p_queue AND code = p_code
                FOR UPDATE;
            INSERT INTO queue_texts (queue, code, purpose, text)
                VALUES (p_queue, p_code, p_purpose, p_text)
                ON CONFLICT (queue, code) DO UPDATE SET purpose = excluded.purpose,
                    text = excluded.text;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'text',
                        p_queue || '.' || p_code,
                        CASE WHEN v_old.code IS NULL THEN NULL
                             ELSE json_build_object('for', v_old.purpose, 'text', v_old.text)
                        END,
                        json_build_object('for', p_purpose, 'text', p_text));
        END
        $$ $f$, pinned);
    -- Deletes ready-made text p_code of queue p_queue (events that kept its code keep it).
    EXECUTE format($f$
        CREATE FUNCTION caseload_delete_text(p_actor TEXT, p_queue TEXT, p_code TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old queue_texts;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            DELETE FROM queue_texts WHERE queue = p_queue AND code = p_code
                RETURNING * INTO v_old;
            IF v_old.code IS NULL THEN
                RAISE EXCEPTION 'queue %% has no text %%', p_queue, p_code;
            END IF;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'text',
                        p_queue || '.' || p_code,
                        json_build_object('for', v_old.purpose, 'text', v_old.text),
                        json_build_object('deleted', true));
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
            ELSE
                DELETE FROM queue_fields WHERE queue = p_name;
                DELETE FROM queue_texts WHERE queue = p_name;
            END IF;
            DELETE FROM item_counts WHERE queue = p_name;
            DELETE FROM queues WHERE name = p_name;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        CASE WHEN p_renamed_to IS NULL THEN json_build_object('deleted', true)
                             ELSE json_build_object('renamed_to', p_renamed_to) END);
        END
        $$ $f$, pinned);
    -- Every role that may read the queues may read their texts.
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'queues'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON queue_texts TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$migrate$;
