-- PostgreSQL schema version 7. Never edit: append a new step instead.
-- The queue changes that came after the identity step (the take order, deleting a queue
-- and the last step of renaming one) go through SECURITY DEFINER functions too, like
-- caseload_put_queue: a supervisor's database role holding only the README's
-- least-privilege grants (no UPDATE or DELETE on queues, no INSERT into audit) can make
-- them, and a staff role cannot, not even from psql.
DO $migrate$
DECLARE
    pinned TEXT := format('SET search_path = %I, pg_catalog, pg_temp', current_schema());
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION caseload_put_queue_order(p_actor TEXT, p_name TEXT, p_order TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            UPDATE queues SET take_order = p_order WHERE name = p_name;
        END
        $$ $f$, pinned);
    EXECUTE format($f$
        CREATE FUNCTION caseload_drop_queue(p_actor TEXT, p_at BIGINT, p_name TEXT,
                                            p_old TEXT, p_new TEXT)
        RETURNS void LANGUAGE plpgsql SECURITY DEFINER %s AS $$
        BEGIN
            PERFORM caseload_require_supervisor(p_actor);
            IF EXISTS (SELECT 1 FROM items WHERE queue = p_name) THEN
                RAISE EXCEPTION 'queue %% still holds items; only an empty queue can be deleted',
                    p_name;
            END IF;
            DELETE FROM item_counts WHERE queue = p_name;
            DELETE FROM queues WHERE name = p_name;
            INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value)
                VALUES (p_at, p_actor, session_user, 'queue', p_name, p_old::json, p_new::json);
        END
        $$ $f$, pinned);
END
$migrate$;
