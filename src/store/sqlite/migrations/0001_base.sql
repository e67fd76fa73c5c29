-- Released in 0.1.0. Never edit: append a new step instead.
CREATE TABLE queues (
    name          TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    lock_seconds  INTEGER NOT NULL DEFAULT 1800 CHECK (lock_seconds > 0),
    warn_seconds  INTEGER NOT NULL DEFAULT 120 CHECK (warn_seconds >= 0),
    max_per_user  INTEGER NULL CHECK (max_per_user IS NULL OR max_per_user > 0),
    paused        INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1))
) WITHOUT ROWID;

CREATE TABLE items (
    id           INTEGER PRIMARY KEY,
    queue        TEXT NOT NULL REFERENCES queues(name),
    request_id   TEXT NULL UNIQUE,
    title        TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 1000),
    body         TEXT NOT NULL DEFAULT '',
    params       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    priority     INTEGER NOT NULL DEFAULT 0,
    due_at       INTEGER NULL,
    state        TEXT NOT NULL DEFAULT 'open'
                 CHECK (state IN ('open', 'done', 'failed', 'cancelled')),
    lock_user    TEXT NULL,
    lock_time    INTEGER NULL,
    lock_token   INTEGER NOT NULL DEFAULT 0,
    notes        TEXT NOT NULL DEFAULT '',
    result       TEXT NULL,
    error        TEXT NULL,
    created_at   INTEGER NOT NULL,
    created_by   TEXT NOT NULL,
    finished_at  INTEGER NULL,
    finished_by  TEXT NULL,
    CHECK ((lock_user IS NULL) = (lock_time IS NULL)),
    CHECK (state = 'open' OR lock_user IS NULL)
);

CREATE INDEX items_take ON items (queue, priority DESC, created_at, id, state) WHERE state = 'open';
CREATE INDEX items_take_all ON items (priority DESC, created_at, id, state) WHERE state = 'open';
CREATE INDEX items_lock_time ON items (lock_time) WHERE lock_user IS NOT NULL;
CREATE INDEX items_lock_user ON items (lock_user, queue) WHERE lock_user IS NOT NULL;
-- Open items by age and by due time: the Stats view, the oldest open item, overdue items.
CREATE INDEX items_open_age ON items (created_at) WHERE state = 'open';
CREATE INDEX items_due ON items (due_at) WHERE state = 'open' AND due_at IS NOT NULL;

CREATE TABLE events (
    id       INTEGER PRIMARY KEY,
    item_id  INTEGER NOT NULL REFERENCES items(id),
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    os_user  TEXT NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled')),
    detail   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);
CREATE INDEX events_item ON events (item_id, id);
CREATE INDEX events_actor ON events (actor, at);
-- Events of a kind over time: completions per hour, locks lost since a visit.
CREATE INDEX events_kind_at ON events (kind, at);

CREATE TABLE users (
    name  TEXT PRIMARY KEY NOT NULL,
    role  TEXT NOT NULL DEFAULT 'staff' CHECK (role IN ('staff', 'supervisor'))
) WITHOUT ROWID;
