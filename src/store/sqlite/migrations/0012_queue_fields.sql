-- SQLite schema version 12. Never edit: append a new step instead.
-- Typed fields per queue (verification work): each queue's field definitions, in order,
-- written by supervisors with an audit record ('field'); a holder's correction writes a
-- `field_changed` event. The event and audit kinds were CHECK constraints, which SQLite
-- cannot change in place: both tables are rebuilt (ids, rows and indexes as they were),
-- their kinds now checked by triggers, so that a later kind is a new trigger, not another
-- rebuild of the largest table.

CREATE TABLE queue_fields (
    queue     TEXT NOT NULL REFERENCES queues(name),
    name      TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 40),
    position  INTEGER NOT NULL,
    spec      TEXT NOT NULL CHECK (json_valid(spec)),
    PRIMARY KEY (queue, name)
) WITHOUT ROWID;

CREATE TABLE events_rebuilt (
    id       INTEGER PRIMARY KEY,
    item_id  INTEGER NOT NULL REFERENCES items(id),
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    os_user  TEXT NOT NULL,
    kind     TEXT NOT NULL,
    detail   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);
INSERT INTO events_rebuilt (id, item_id, at, actor, os_user, kind, detail)
    SELECT id, item_id, at, actor, os_user, kind, detail FROM events ORDER BY id;
DROP TABLE events;
ALTER TABLE events_rebuilt RENAME TO events;
CREATE INDEX events_item ON events (item_id, id);
CREATE INDEX events_actor ON events (actor, at);
CREATE INDEX events_kind_at ON events (kind, at);
CREATE TRIGGER events_hold_end AFTER INSERT ON events
WHEN NEW.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over',
                  'unlocked', 'reassigned', 'cancelled')
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
          AND e.kind IN ('locked', 'taken_over', 'reassigned')
          ORDER BY e.id DESC LIMIT 1) AS s
    JOIN items i ON i.id = NEW.item_id
    WHERE s.holder IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM events x WHERE x.item_id = NEW.item_id AND x.id > s.id AND x.id < NEW.id
        AND x.kind IN ('locked', 'taken_over', 'expired', 'unlocked', 'reassigned',
                       'released', 'skipped', 'completed', 'failed', 'cancelled'));
END;

CREATE TABLE audit_rebuilt (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    actor      TEXT NOT NULL,
    real_user  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    subject    TEXT NOT NULL,
    old_value  TEXT NULL CHECK (old_value IS NULL OR json_valid(old_value)),
    new_value  TEXT NOT NULL CHECK (json_valid(new_value))
);
INSERT INTO audit_rebuilt (id, at, actor, real_user, kind, subject, old_value, new_value)
    SELECT id, at, actor, real_user, kind, subject, old_value, new_value FROM audit ORDER BY id;
DROP TABLE audit;
ALTER TABLE audit_rebuilt RENAME TO audit;
CREATE INDEX audit_at ON audit (at);

CREATE TRIGGER events_kind_known BEFORE INSERT ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
CREATE TRIGGER events_kind_kept BEFORE UPDATE OF kind ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
CREATE TRIGGER audit_kind_known BEFORE INSERT ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
CREATE TRIGGER audit_kind_kept BEFORE UPDATE OF kind ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
