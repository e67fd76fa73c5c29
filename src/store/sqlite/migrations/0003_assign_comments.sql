-- Released in 0.2.0. Never edit: append a new step instead.
-- Assignments, reopening, edits and comment threads: four new event kinds (SQLite cannot
-- change a CHECK, so the events table is rebuilt with its indexes), and the comments
-- table, seeded from the comments earlier versions kept as `noted` events.
CREATE TABLE events_new (
    id       INTEGER PRIMARY KEY,
    item_id  INTEGER NOT NULL REFERENCES items(id),
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    os_user  TEXT NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'assigned', 'reopened',
             'edited', 'commented')),
    detail   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);
INSERT INTO events_new (id, item_id, at, actor, os_user, kind, detail)
    SELECT id, item_id, at, actor, os_user, kind, detail FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_item ON events (item_id, id);
CREATE INDEX events_actor ON events (actor, at);
-- Events of a kind over time: completions per hour, locks lost since a visit.
CREATE INDEX events_kind_at ON events (kind, at);

-- Each item's comment thread: appended with author and time, never edited (a correction is
-- a new comment).
CREATE TABLE comments (
    id       INTEGER PRIMARY KEY,
    item_id  INTEGER NOT NULL REFERENCES items(id),
    at       INTEGER NOT NULL,
    author   TEXT NOT NULL,
    os_user  TEXT NOT NULL,
    text     TEXT NOT NULL CHECK (length(text) > 0)
);
CREATE INDEX comments_item ON comments (item_id, id);

CREATE TRIGGER comments_never_edited BEFORE UPDATE ON comments BEGIN
    SELECT RAISE(ABORT, 'comments are never edited; add a new one');
END;

INSERT INTO comments (item_id, at, author, os_user, text)
    SELECT item_id, at, actor, os_user, json_extract(detail, '$.comment') FROM events
    WHERE kind = 'noted' AND length(json_extract(detail, '$.comment')) > 0 ORDER BY id;
