-- PostgreSQL schema version 24. Never edit: append a new step instead.
-- Who may take what, team leads, people who leave (issue 29 §2-§4): the users' columns
-- and table as in SQLite's step 23, written only through the SECURITY DEFINER functions
-- below (everyday roles only read them).
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check
    CHECK (role IN ('staff', 'supervisor', 'lead'));
ALTER TABLE users ADD COLUMN take_limited BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN review_limited BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN left_at BIGINT NULL;
ALTER TABLE users ADD COLUMN left_reason TEXT NULL;

CREATE TABLE user_queues (
    name   TEXT NOT NULL,
    kind   TEXT NOT NULL CHECK (kind IN ('take', 'review')),
    queue  TEXT NOT NULL,
    PRIMARY KEY (name, kind, queue)
);

ALTER TABLE audit DROP CONSTRAINT audit_kind_check;
ALTER TABLE audit ADD CONSTRAINT audit_kind_check
    CHECK (kind IN ('role', 'login', 'queue', 'field', 'text', 'access', 'leaving'));

DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
    r RECORD;
    def TEXT;
BEGIN
    -- A supervisor who left is one no more.
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION caseload_require_supervisor(p_actor TEXT) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM users u WHERE u.name = p_actor
                           AND u.role = 'supervisor' AND u.left_at IS NULL
                           AND (u.name = session_user OR u.login = session_user
                                OR caseload_privileged())) THEN
                RAISE EXCEPTION 'supervisor only: database role %% may not act as supervisor %%',
                    session_user, p_actor USING ERRCODE = '42501';
            END IF;
        END
        $$ $f$, pinned);
    -- As the above for a change to queue p_queue, which a lead of that queue (one who may
    -- take from it) may make too.
    EXECUTE format($f$
        CREATE FUNCTION caseload_require_supervisor(p_actor TEXT, p_queue TEXT) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM users u WHERE u.name = p_actor
                           AND u.left_at IS NULL
                           AND (u.role = 'supervisor'
                                OR (u.role = 'lead' AND u.take_limited
                                    AND EXISTS (SELECT 1 FROM user_queues e
                                                WHERE e.name = p_actor AND e.kind = 'take'
                                                AND e.queue = p_queue)))
                           AND (u.name = session_user OR u.login = session_user
                                OR caseload_privileged())) THEN
                RAISE EXCEPTION 'supervisor only: database role %% may not act as a supervisor of queue %% under the name %%',
                    session_user, p_queue, p_actor USING ERRCODE = '42501';
            END IF;
        END
        $$ $f$, pinned);
    -- The queue's own changes check the queue: a lead makes them for their queues.
    FOR r IN SELECT * FROM (VALUES ('caseload_set_queue', 'p_name'),
                                   ('caseload_set_field', 'p_queue'),
                                   ('caseload_delete_field', 'p_queue'),
                                   ('caseload_put_text', 'p_queue'),
                                   ('caseload_delete_text', 'p_queue'),
                                   ('caseload_set_sla', 'p_queue')) AS f(name, queue) LOOP
        SELECT pg_get_functiondef(p.oid) INTO def FROM pg_proc p
            WHERE p.proname = r.name AND p.pronamespace = current_schema()::regnamespace;
        IF def IS NULL OR position('PERFORM caseload_require_supervisor(p_actor);' IN def) = 0 THEN
            RAISE EXCEPTION 'function % does not check its caller as expected', r.name;
        END IF;
        EXECUTE replace(def, 'PERFORM caseload_require_supervisor(p_actor);',
                        format('PERFORM caseload_require_supervisor(p_actor, %s);', r.queue));
    END LOOP;
    -- A renamed queue's lists follow it; a deleted queue leaves them.
    SELECT pg_get_functiondef(p.oid) INTO def FROM pg_proc p
        WHERE p.proname = 'caseload_delete_queue'
        AND p.pronamespace = current_schema()::regnamespace;
    IF position('UPDATE queue_texts SET queue = p_renamed_to WHERE queue = p_name;' IN def) = 0
       OR position('DELETE FROM queue_texts WHERE queue = p_name;' IN def) = 0 THEN
        RAISE EXCEPTION 'caseload_delete_queue is not as expected';
    END IF;
    EXECUTE replace(replace(def,
        'UPDATE queue_texts SET queue = p_renamed_to WHERE queue = p_name;',
        'UPDATE queue_texts SET queue = p_renamed_to WHERE queue = p_name;
                UPDATE user_queues SET queue = p_renamed_to WHERE queue = p_name;'),
        'DELETE FROM queue_texts WHERE queue = p_name;',
        'DELETE FROM queue_texts WHERE queue = p_name;
                DELETE FROM user_queues WHERE queue = p_name;');
    -- Sets which queues p_name may take from (p_take) and review in (p_review); NULL:
    -- all; an empty array: none. Audited as 'access'.
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_access(p_actor TEXT, p_name TEXT, p_take TEXT[],
                                            p_review TEXT[])
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old json;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            PERFORM 1 FROM users WHERE name = p_name FOR UPDATE;
            SELECT json_build_object(
                'queues', CASE WHEN u.take_limited THEN coalesce((SELECT json_agg(e.queue
                    ORDER BY e.queue) FROM user_queues e WHERE e.name = p_name
                    AND e.kind = 'take'), '[]'::json) ELSE to_json('all'::text) END,
                'reviews', CASE WHEN u.review_limited THEN coalesce((SELECT json_agg(e.queue
                    ORDER BY e.queue) FROM user_queues e WHERE e.name = p_name
                    AND e.kind = 'review'), '[]'::json) ELSE to_json('all'::text) END)
                INTO v_old FROM users u WHERE u.name = p_name;
            INSERT INTO users (name, take_limited, review_limited)
                VALUES (p_name, p_take IS NOT NULL, p_review IS NOT NULL)
                ON CONFLICT (name) DO UPDATE SET take_limited = excluded.take_limited,
                    review_limited = excluded.review_limited;
            DELETE FROM user_queues WHERE name = p_name;
            INSERT INTO user_queues (name, kind, queue)
                SELECT p_name, 'take', q FROM unnest(coalesce(p_take, '{}')) q
                UNION SELECT p_name, 'review', q FROM unnest(coalesce(p_review, '{}')) q;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'access', p_name, v_old,
                        json_build_object(
                            'queues', coalesce(to_json(p_take), to_json('all'::text)),
                            'reviews', coalesce(to_json(p_review), to_json('all'::text))));
        END
        $$ $f$, pinned);
    -- Marks p_name as leaving for p_reason (their login binding removed), or back when
    -- p_reason is NULL. p_detail is what caseload did to their work in the same
    -- transaction (how many items it returned), kept in the audit's new value.
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_leaving(p_actor TEXT, p_name TEXT, p_reason TEXT,
                                             p_detail TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old users;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            SELECT * INTO v_old FROM users WHERE name = p_name FOR UPDATE;
            IF p_reason IS NOT NULL THEN
                INSERT INTO users (name, left_at, left_reason, login)
                    VALUES (p_name, caseload_now_ms(), p_reason, NULL)
                    ON CONFLICT (name) DO UPDATE SET left_at = excluded.left_at,
                        left_reason = excluded.left_reason, login = NULL;
            ELSE
                UPDATE users SET left_at = NULL, left_reason = NULL WHERE name = p_name;
            END IF;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'leaving', p_name,
                        json_build_object('left', v_old.left_at IS NOT NULL,
                                          'login', v_old.login),
                        (coalesce(p_detail, '{}')::jsonb
                         || jsonb_build_object('left', p_reason IS NOT NULL,
                                               'reason', p_reason))::json);
        END
        $$ $f$, pinned);
    -- Every role that may read the users may read their queues.
    FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
             WHERE table_schema = current_schema() AND table_name = 'users'
             AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
        EXECUTE 'GRANT SELECT ON user_queues TO '
            || CASE WHEN r.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r.grantee) END;
    END LOOP;
END
$migrate$;
