-- PostgreSQL schema version 10. Never edit: append a new step instead.
-- The server, not the caller, writes who and when, so that a role holding only the
-- README's least-privilege grants cannot forge the audit trail even from psql:
-- * events and comments: a trigger sets os_user to the session's role and `at` to the
--   transaction's time (the time caseload's own write reads when it begins), and refuses
--   an actor (author) name the session's role may not use. A privileged session (a
--   superuser, or a member of the tables' owner) could change the tables directly anyway,
--   and keeps what it writes (migrate-to copies history; the demo back-dates its own).
-- * holds: written only by the events trigger, whose function now runs as the owner;
--   nobody else needs INSERT on holds any more, and it is revoked.
-- * audit: the role, login and queue functions take no time and no old value: the
--   server reads both inside the function (the old row held FOR UPDATE) and builds the new
--   value from what it writes. The functions that took them from the caller are dropped.
DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
    r RECORD;
BEGIN
    -- The server's now in Unix milliseconds: the transaction's start, the same instant
    -- every statement of one write reads.
    EXECUTE format($f$
        CREATE FUNCTION caseload_now_ms() RETURNS bigint
        LANGUAGE sql STABLE %s AS $$
            SELECT floor(extract(epoch FROM now()) * 1000)::bigint
        $$ $f$, pinned);
    -- May the session's role use caseload name p_name? Its own, bound to it, or a
    -- privileged role (as domain::user::may_act_as decides for the client).
    EXECUTE format($f$
        CREATE FUNCTION caseload_may_act_as(p_name TEXT) RETURNS boolean
        LANGUAGE sql STABLE SECURITY DEFINER %s AS $$
            SELECT p_name = session_user
                OR EXISTS (SELECT 1 FROM users u WHERE u.name = p_name
                           AND u.login = session_user)
                OR caseload_privileged()
        $$ $f$, pinned);
    EXECUTE format($f$
        CREATE FUNCTION caseload_stamp_event() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            IF caseload_privileged() THEN
                RETURN NEW;
            END IF;
            IF NOT caseload_may_act_as(NEW.actor) THEN
                RAISE EXCEPTION 'database role %% may not act as %%', session_user, NEW.actor
                    USING ERRCODE = '42501';
            END IF;
            NEW.os_user := session_user;
            NEW.at := caseload_now_ms();
            RETURN NEW;
        END
        $$ $f$, pinned);
    EXECUTE format($f$
        CREATE FUNCTION caseload_stamp_comment() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            IF caseload_privileged() THEN
                RETURN NEW;
            END IF;
            IF NOT caseload_may_act_as(NEW.author) THEN
                RAISE EXCEPTION 'database role %% may not act as %%', session_user, NEW.author
                    USING ERRCODE = '42501';
            END IF;
            NEW.os_user := session_user;
            NEW.at := caseload_now_ms();
            RETURN NEW;
        END
        $$ $f$, pinned);
    -- The holds trigger writes as the owner: everyday roles need no INSERT on holds.
    EXECUTE format('ALTER FUNCTION caseload_hold_end() SECURITY DEFINER %s', pinned);
    FOR r IN SELECT a.grantee FROM pg_class k, aclexplode(k.relacl) a
             WHERE k.oid = 'holds'::regclass AND a.privilege_type = 'INSERT'
             AND a.grantee <> k.relowner LOOP
        EXECUTE 'REVOKE INSERT ON holds FROM '
            || CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.grantee::regrole::text) END;
    END LOOP;

    -- The audit, written by the server.
    DROP FUNCTION caseload_put_role(TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT);
    DROP FUNCTION caseload_put_login(TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT);
    DROP FUNCTION caseload_put_queue(TEXT, BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BOOLEAN,
                                     TEXT, TEXT);
    DROP FUNCTION caseload_put_queue_order(TEXT, TEXT, TEXT);
    DROP FUNCTION caseload_drop_queue(TEXT, BIGINT, TEXT, TEXT, TEXT);
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_role(p_actor TEXT, p_name TEXT, p_role TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old TEXT;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            SELECT role INTO v_old FROM users WHERE name = p_name FOR UPDATE;
            INSERT INTO users (name, role) VALUES (p_name, p_role)
                ON CONFLICT (name) DO UPDATE SET role = excluded.role;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'role', p_name,
                        to_json(coalesce(v_old, 'staff')), to_json(p_role));
        END
        $$ $f$, pinned);
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_login(p_actor TEXT, p_name TEXT, p_login TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        DECLARE
            v_old TEXT;
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            SELECT login INTO v_old FROM users WHERE name = p_name FOR UPDATE;
            INSERT INTO users (name, login) VALUES (p_name, p_login)
                ON CONFLICT (name) DO UPDATE SET login = excluded.login;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'login', p_name,
                        to_json(v_old), coalesce(to_json(p_login), 'null'::json));
        END
        $$ $f$, pinned);
    -- A queue's settings as its audit records show them (store/ops/supervise.rs's
    -- settings_json, which the SQLite store writes; a test compares the two).
    EXECUTE format($f$
        CREATE FUNCTION caseload_queue_json(q queues) RETURNS json
        LANGUAGE sql STABLE %s AS $$
            SELECT json_build_object('lock_seconds', q.lock_seconds,
                                     'warn_seconds', q.warn_seconds,
                                     'max_per_user', q.max_per_user, 'paused', q.paused)
        $$ $f$, pinned);
    -- Creates or changes queue p_name; p_renamed_from names the queue it is the new name
    -- of (which must exist, while p_name must not).
    EXECUTE format($f$
        CREATE FUNCTION caseload_set_queue(p_actor TEXT, p_name TEXT, p_lock BIGINT,
                                           p_warn BIGINT, p_max BIGINT, p_paused BOOLEAN,
                                           p_order TEXT, p_renamed_from TEXT)
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
                                take_order)
                VALUES (p_name, p_lock, p_warn, p_max, p_paused, p_order)
                ON CONFLICT (name) DO UPDATE SET lock_seconds = excluded.lock_seconds,
                    warn_seconds = excluded.warn_seconds,
                    max_per_user = excluded.max_per_user, paused = excluded.paused,
                    take_order = excluded.take_order
                RETURNING * INTO v_new;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        caseload_queue_json(v_new));
        END
        $$ $f$, pinned);
    -- Deletes empty queue p_name; p_renamed_to names the queue it was renamed to (which
    -- must exist by now).
    EXECUTE format($f$
        CREATE FUNCTION caseload_delete_queue(p_actor TEXT, p_name TEXT, p_renamed_to TEXT)
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
            DELETE FROM item_counts WHERE queue = p_name;
            DELETE FROM queues WHERE name = p_name;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (caseload_now_ms(), p_actor, session_user, 'queue', p_name, v_old,
                        CASE WHEN p_renamed_to IS NULL THEN json_build_object('deleted', true)
                             ELSE json_build_object('renamed_to', p_renamed_to) END);
        END
        $$ $f$, pinned);
END
$migrate$;

-- The WHEN clause (bound to the table at creation, so no search path can change it) keeps
-- the trigger off the hot path of a role that may TRUNCATE the table anyway (its owner,
-- a superuser): one privilege lookup per row instead of a function call.
CREATE TRIGGER events_stamp BEFORE INSERT ON events FOR EACH ROW
    WHEN (NOT has_table_privilege(session_user, 'events'::regclass, 'TRUNCATE'))
    EXECUTE FUNCTION caseload_stamp_event();
CREATE TRIGGER comments_stamp BEFORE INSERT ON comments FOR EACH ROW
    WHEN (NOT has_table_privilege(session_user, 'comments'::regclass, 'TRUNCATE'))
    EXECUTE FUNCTION caseload_stamp_comment();
