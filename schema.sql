-- caseload: the whole current SQLite schema (user_version 20).
--
-- A fresh database is created from this file in one IMMEDIATE transaction. An older
-- database is brought up to date by the steps in src/store/migrations/ instead; a test
-- checks that both roads end at the same schema. Times are Unix milliseconds, UTC.

CREATE TABLE queues (
    name          TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    lock_seconds  INTEGER NOT NULL DEFAULT 1800 CHECK (lock_seconds > 0),
    warn_seconds  INTEGER NOT NULL DEFAULT 120 CHECK (warn_seconds >= 0),
    max_per_user  INTEGER NULL CHECK (max_per_user IS NULL OR max_per_user > 0),
    paused        INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    -- 'priority' (priority, then age) or 'due' (due time, then priority, then age).
    take_order    TEXT NOT NULL DEFAULT 'priority' CHECK (take_order IN ('priority', 'due')),
    -- How long a woken park waits for its owner; how long an undo is offered (0: none).
    park_grace_seconds INTEGER NOT NULL DEFAULT 3600
                  CHECK (park_grace_seconds BETWEEN 60 AND 604800),
    undo_seconds  INTEGER NOT NULL DEFAULT 30 CHECK (undo_seconds BETWEEN 0 AND 3600),
    -- The share of completions reviewed (0 none, 100 all) and each person's first
    -- completions always reviewed (src/domain/review.rs).
    review_percent INTEGER NOT NULL DEFAULT 0 CHECK (review_percent BETWEEN 0 AND 100),
    review_new    INTEGER NOT NULL DEFAULT 0 CHECK (review_new BETWEEN 0 AND 1000)
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
                 CHECK (state IN ('open', 'done', 'failed', 'cancelled', 'parked', 'review')),
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
    -- The creator's OS login (created_by is the caseload name); NULL on items older than
    -- schema 4, which have a `created` event row instead.
    created_os   TEXT NULL,
    -- Where the record came from (`add --source`, import's column); searched.
    source       TEXT NULL,
    -- Parked by its holder (state 'parked', no lock) until a time, for a reason; only
    -- they may take it until then and for the grace after (src/store/ops/park.rs).
    parked_until INTEGER NULL,
    parked_by    TEXT NULL,
    park_reason  TEXT NULL,
    -- When the lock expires: its take or last renewal plus the queue's lock age then, so a
    -- lock keeps the age it was given (lock_time is when it was taken).
    lock_expires_at INTEGER NULL,
    -- The item this one was merged into as a duplicate (`caseload merge`); NULL otherwise.
    duplicate_of INTEGER NULL,
    -- Digest of the field definitions' version, the queue and the params when every field
    -- of the record was last found to keep its rules (src/store/ops/fields.rs); NULL: never.
    fields_checked BLOB NULL,
    CHECK ((lock_user IS NULL) = (lock_time IS NULL)),
    CHECK ((lock_user IS NULL) = (lock_expires_at IS NULL)),
    CHECK (state IN ('open', 'review') OR lock_user IS NULL)
);

-- Take order within a queue, exactly: neither a claim nor the first screen sorts. The
-- trailing `state` makes them covering, so skipping rows while paging never reads the table.
CREATE INDEX items_take ON items (queue, priority DESC, created_at, id, state) WHERE state = 'open';
-- Take order of a queue ordered by due time: overdue and soonest due first, items without
-- a due time after those with one (the CASE sorts them last), then priority and age.
CREATE INDEX items_take_due ON items (queue, (CASE WHEN due_at IS NULL THEN 9223372036854775807 ELSE due_at END), priority DESC, created_at, id, state) WHERE state = 'open';
-- Take order across all queues (take next without a queue filter, the unfiltered list).
CREATE INDEX items_take_all ON items (priority DESC, created_at, id, state) WHERE state = 'open';
-- The held items are few (a lock per person at a time, and expired ones until taken): two
-- partial indexes serve every read of them, so that a claim or a complete rewrites two of
-- their pages, not four. A user's own locks: Mine, resume, the WIP limit. (By expiry and by
-- lock time, the Locks view, reaping, take-over and `list --state expired` read
-- `items_held` below whole.)
CREATE INDEX items_lock_user ON items (lock_user, queue) WHERE lock_user IS NOT NULL;
-- Items by who created them and when: a user's day (`history`, the TUI's activity) shows
-- their creations, which have no event row.
CREATE INDEX items_created_by ON items (created_by, created_at);
-- Open items by age and by due time: the Stats view, the oldest open item, overdue items.
CREATE INDEX items_open_age ON items (created_at) WHERE state = 'open';
CREATE INDEX items_due ON items (due_at) WHERE state = 'open' AND due_at IS NOT NULL;
-- Parked items by wake time: an owner's woken items, the grace's return to the pool.
CREATE INDEX items_parked ON items (parked_until) WHERE state = 'parked';
-- Items waiting for review, oldest submission first: the reviewer's take, the backlog.
CREATE INDEX items_review ON items (queue, finished_at, id) WHERE state = 'review';

CREATE TABLE events (
    id       INTEGER PRIMARY KEY,
    item_id  INTEGER NOT NULL REFERENCES items(id),
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    os_user  TEXT NOT NULL,
    -- One of the kinds `events_kind_known` lists (domain::EventKind).
    kind     TEXT NOT NULL,
    detail   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);
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

CREATE TABLE users (
    name       TEXT PRIMARY KEY NOT NULL,
    -- A lead is a supervisor for the queues they may take from only.
    role       TEXT NOT NULL DEFAULT 'staff' CHECK (role IN ('staff', 'supervisor', 'lead')),
    last_seen  INTEGER NULL,
    -- The OS login this name is bound to (NULL: only the login of the same name uses it).
    login      TEXT NULL,
    -- Set: they take (review) only in the queues `user_queues` lists for them; else in all.
    take_limited    INTEGER NOT NULL DEFAULT 0 CHECK (take_limited IN (0, 1)),
    review_limited  INTEGER NOT NULL DEFAULT 0 CHECK (review_limited IN (0, 1)),
    -- Marked as leaving (when, why): takes no work, is assigned none.
    left_at         INTEGER NULL,
    left_reason     TEXT NULL
) WITHOUT ROWID;

-- The queues a limited person may take from ('take') or review in ('review'); the claim's
-- conditional write probes it by its key (store::sql::eligible!).
CREATE TABLE user_queues (
    name   TEXT NOT NULL,
    kind   TEXT NOT NULL CHECK (kind IN ('take', 'review')),
    queue  TEXT NOT NULL,
    PRIMARY KEY (name, kind, queue)
) WITHOUT ROWID;

-- Changes that are not about one item (roles, login bindings, queue settings, fields): who (the
-- name and the OS login behind it), when, and old and new value as JSON.
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    actor      TEXT NOT NULL,
    real_user  TEXT NOT NULL,
    -- One of the kinds `audit_kind_known` lists (domain::AuditKind).
    kind       TEXT NOT NULL,
    subject    TEXT NOT NULL,
    old_value  TEXT NULL CHECK (old_value IS NULL OR json_valid(old_value)),
    new_value  TEXT NOT NULL CHECK (json_valid(new_value))
);
CREATE INDEX audit_at ON audit (at);

-- Counts by queue and state, kept by triggers so that a refresh never scans items.
CREATE TABLE item_counts (
    queue  TEXT NOT NULL,
    state  TEXT NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (queue, state)
) WITHOUT ROWID;

CREATE TRIGGER items_count_insert AFTER INSERT ON items BEGIN
    INSERT INTO item_counts (queue, state, n) VALUES (NEW.queue, NEW.state, 1)
        ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER items_count_update AFTER UPDATE OF state, queue ON items
WHEN OLD.state IS NOT NEW.state OR OLD.queue IS NOT NEW.queue BEGIN
    UPDATE item_counts SET n = n - 1 WHERE queue = OLD.queue AND state = OLD.state;
    INSERT INTO item_counts (queue, state, n) VALUES (NEW.queue, NEW.state, 1)
        ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER items_count_delete AFTER DELETE ON items BEGIN
    UPDATE item_counts SET n = n - 1 WHERE queue = OLD.queue AND state = OLD.state;
END;

-- Holds: one row per person's span holding an item (from the event giving them its lock to
-- the event ending it), written by the trigger below in the transaction of the ending
-- event. The supervisors' figures (handle, wait and cycle time, lost locks, due health of
-- finished items) read only this table; `caseload check` compares it with the events.
-- Clustered by the end time, so a period is one range of the table.
CREATE TABLE holds (
    ended      INTEGER NOT NULL,
    event_id   INTEGER NOT NULL,
    item_id    INTEGER NOT NULL,
    queue      TEXT NOT NULL,
    holder     TEXT NOT NULL,
    started    INTEGER NOT NULL,
    how        TEXT NOT NULL,
    -- Set on a finish (how is completed or failed), else NULL.
    handle_ms  INTEGER NULL,
    own_ms     INTEGER NULL,
    wait_ms    INTEGER NULL,
    cycle_ms   INTEGER NULL,
    late_ms    INTEGER NULL,
    PRIMARY KEY (ended, event_id)
) WITHOUT ROWID;
CREATE INDEX holds_item ON holds (item_id, event_id);

-- Open items with a due time by queue: each queue's overdue and due-soon counts.
CREATE INDEX items_queue_due ON items (queue, due_at) WHERE state = 'open' AND due_at IS NOT NULL;

-- The hold an event ends: the item's last lock-giving event before it, when no event that
-- ends a hold came in between. A finish adds the item's figures: every hold since its
-- previous finish (handle), the finisher's share (own), creation to its first hold (wait)
-- and to now (cycle), and the finish minus the due time (late).
CREATE TRIGGER events_hold_end AFTER INSERT ON events
WHEN NEW.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over',
                  'unlocked', 'reassigned', 'cancelled', 'parked')
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
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN min(coalesce((
            SELECT min(h.started) FROM holds h WHERE h.item_id = NEW.item_id), s.at), s.at)
            - i.created_at END,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN NEW.at - i.created_at END,
        CASE WHEN NEW.kind IN ('completed', 'failed') THEN NEW.at - i.due_at END
    FROM (SELECT e.id, e.at,
                 CASE e.kind WHEN 'reassigned' THEN e.detail ->> 'to' ELSE e.actor END AS holder
          FROM events e WHERE e.item_id = NEW.item_id AND e.id < NEW.id
          AND e.kind IN ('locked', 'taken_over', 'reassigned', 'undone')
          ORDER BY e.id DESC LIMIT 1) AS s
    JOIN items i ON i.id = NEW.item_id
    WHERE s.holder IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM events x WHERE x.item_id = NEW.item_id AND x.id > s.id AND x.id < NEW.id
        AND x.kind IN ('locked', 'taken_over', 'expired', 'unlocked', 'reassigned',
                       'released', 'skipped', 'completed', 'failed', 'cancelled', 'parked',
                       'undone', 'accepted', 'rejected'));
END;

-- Search: a trigram index over each item's text, folded by caseload_fold (the rule of
-- src/domain/search.rs, so index and scan agree), kept behind a high-water mark so that
-- adding items never pays for it. Items with an id above
-- `search_meta.indexed`, and items changed after they were indexed (`search_dirty`), are
-- scanned instead; the TUI indexes them in the background (src/store/sqlite/search.rs).
-- The indexed text is the field table's searched columns, one line each
-- (src/domain/fields.rs); `search_meta.version` names them, and caseload adds to the
-- index only when that is its own version.
-- The index (src/store/sqlite/postings.rs; migration 28 says why): for each batch of
-- indexed items and each trigram of their folded words (a word's end padded with line
-- ends, so that every occurrence of a word of one or two characters begins a trigram;
-- such a word is looked up through the range of trigrams that begin with it), how many
-- items hold it and their ids (varints of the differences), written once per batch.
CREATE TABLE search_batches (
    batch INTEGER PRIMARY KEY,
    items INTEGER NOT NULL
);
CREATE TABLE search_postings (
    batch INTEGER NOT NULL,
    tri   TEXT NOT NULL,
    n     INTEGER NOT NULL,
    ids   BLOB NOT NULL,
    PRIMARY KEY (batch, tri)
);

CREATE TABLE search_meta (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    indexed  INTEGER NOT NULL,
    version  TEXT NOT NULL DEFAULT ''
);
INSERT INTO search_meta (one, indexed, version)
    VALUES (1, 0, '1:title,body,params,notes,result,error,source');

CREATE TABLE search_dirty (id INTEGER PRIMARY KEY);

CREATE TRIGGER items_search_dirty AFTER UPDATE OF title, body, params, notes, result, error, source
ON items WHEN NEW.id <= (SELECT indexed FROM search_meta) BEGIN
    INSERT OR IGNORE INTO search_dirty (id) VALUES (NEW.id);
END;

-- The figures' day summary: per UTC day (`day`, the day's first millisecond) x queue x
-- holder, what the holds that ended that day add up to, kept by a trigger on `holds` in
-- the transaction of the event that ended the hold. A period's whole UTC days read these
-- rows instead of every hold; its partial days at the edges read `holds` (exact for any
-- time zone). `finishes` lists every finish exactly, one entry "k,at,own,handle,wait,
-- cycle,late;" (k: c completed, f failed; at: milliseconds into the day; late empty
-- without a due time), so medians and percentiles stay exact. A cell is one or more rows
-- (`chunk` 0, 1, …): once a row's list reaches 700 characters the next hold starts a new
-- one, so that keeping a busy person's day rewrites one small row (within one page of the
-- WITHOUT ROWID tree), not a growing one.
CREATE TABLE figure_days (
    day        INTEGER NOT NULL,
    queue      TEXT NOT NULL,
    holder     TEXT NOT NULL,
    chunk      INTEGER NOT NULL,
    holds      INTEGER NOT NULL,
    completed  INTEGER NOT NULL,
    failed     INTEGER NOT NULL,
    skipped    INTEGER NOT NULL,
    released   INTEGER NOT NULL,
    lost       INTEGER NOT NULL,
    held_ms    INTEGER NOT NULL,
    finishes   TEXT NOT NULL,
    PRIMARY KEY (day, queue, holder, chunk)
) WITHOUT ROWID;

CREATE TRIGGER holds_figure_day AFTER INSERT ON holds
BEGIN
    INSERT INTO figure_days (day, queue, holder, chunk, holds, completed, failed, skipped,
                             released, lost, held_ms, finishes)
    VALUES (NEW.ended - (NEW.ended % 86400000 + 86400000) % 86400000, NEW.queue, NEW.holder,
        coalesce((SELECT d.chunk + CASE WHEN length(d.finishes) >= 700 THEN 1 ELSE 0 END
                  FROM figure_days d
                  WHERE d.day = NEW.ended - (NEW.ended % 86400000 + 86400000) % 86400000
                  AND d.queue = NEW.queue AND d.holder = NEW.holder
                  ORDER BY d.chunk DESC LIMIT 1), 0),
        1,
        CASE WHEN NEW.how = 'completed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'failed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'skipped' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'released' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how IN ('expired', 'taken_over', 'unlocked', 'reassigned') THEN 1 ELSE 0 END,
        NEW.ended - NEW.started,
        CASE WHEN NEW.how IN ('completed', 'failed') THEN
            CASE NEW.how WHEN 'completed' THEN 'c' ELSE 'f' END
            || ',' || CAST((NEW.ended % 86400000 + 86400000) % 86400000 AS TEXT)
            || ',' || CAST(NEW.own_ms AS TEXT) || ',' || CAST(NEW.handle_ms AS TEXT)
            || ',' || CAST(NEW.wait_ms AS TEXT) || ',' || CAST(NEW.cycle_ms AS TEXT)
            || ',' || coalesce(CAST(NEW.late_ms AS TEXT), '') || ';'
        ELSE '' END)
    ON CONFLICT (day, queue, holder, chunk) DO UPDATE SET
        holds = figure_days.holds + 1,
        completed = figure_days.completed + excluded.completed,
        failed = figure_days.failed + excluded.failed,
        skipped = figure_days.skipped + excluded.skipped,
        released = figure_days.released + excluded.released,
        lost = figure_days.lost + excluded.lost,
        held_ms = figure_days.held_ms + excluded.held_ms,
        finishes = figure_days.finishes || excluded.finishes;
END;

-- Totals per queue since the database began, for `caseload metrics` (a monitoring system
-- reads them every 15 s): the holds ended, how many of them completed or failed their item,
-- and the time they lasted. Kept by a trigger on `holds` in the transaction of the event
-- that ended the hold, so the counters never go down and are read from one row per queue
-- instead of summing the day summary. `caseload check` compares them with the holds;
-- `check --repair-figures` rebuilds them with the holds.
CREATE TABLE queue_totals (
    queue      TEXT PRIMARY KEY NOT NULL,
    holds      INTEGER NOT NULL,
    completed  INTEGER NOT NULL,
    failed     INTEGER NOT NULL,
    held_ms    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER holds_queue_total AFTER INSERT ON holds
BEGIN
    INSERT INTO queue_totals (queue, holds, completed, failed, held_ms)
    VALUES (NEW.queue, 1,
        CASE WHEN NEW.how = 'completed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.how = 'failed' THEN 1 ELSE 0 END,
        NEW.ended - NEW.started)
    ON CONFLICT (queue) DO UPDATE SET
        holds = queue_totals.holds + 1,
        completed = queue_totals.completed + excluded.completed,
        failed = queue_totals.failed + excluded.failed,
        held_ms = queue_totals.held_ms + excluded.held_ms;
END;

-- The held locks by queue with their expiry, read from the index alone (the holder is in
-- it so that SQLite needs no table row): each queue's held, expired and assigned counts;
-- read whole for the held items by expiry or lock time.
CREATE INDEX items_held ON items (queue, lock_expires_at, lock_user) WHERE lock_user IS NOT NULL;

-- Typed fields per queue (verification work): each queue's field definitions in screen
-- order; `spec` is the definition as JSON (domain::queue_fields::FieldDef::spec_json). An
-- item's value of a field lives in its params under the field's name.
CREATE TABLE queue_fields (
    queue     TEXT NOT NULL REFERENCES queues(name),
    name      TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 40),
    position  INTEGER NOT NULL,
    spec      TEXT NOT NULL CHECK (json_valid(spec)),
    PRIMARY KEY (queue, name)
) WITHOUT ROWID;

-- Changes with every change to any queue's fields (a random number: never the same twice);
-- what a record's `fields_checked` digest and a process's copy of the definitions are
-- valid for.
CREATE TABLE fields_version (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    n    INTEGER NOT NULL
);
INSERT INTO fields_version (one, n) VALUES (1, random());
CREATE TRIGGER queue_fields_version_insert AFTER INSERT ON queue_fields BEGIN
    UPDATE fields_version SET n = random();
END;
CREATE TRIGGER queue_fields_version_update AFTER UPDATE ON queue_fields BEGIN
    UPDATE fields_version SET n = random();
END;
CREATE TRIGGER queue_fields_version_delete AFTER DELETE ON queue_fields BEGIN
    UPDATE fields_version SET n = random();
END;

-- Ready-made texts per queue (results, fail/skip/release/park/reject reasons, comments), each
-- under a code unique within its queue that the event keeps when a holder chooses it.
CREATE TABLE queue_texts (
    queue    TEXT NOT NULL REFERENCES queues(name),
    code     TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 32),
    purpose  TEXT NOT NULL CHECK (purpose IN ('result', 'fail', 'skip', 'release', 'park',
                                              'comment', 'reject')),
    text     TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    PRIMARY KEY (queue, code)
) WITHOUT ROWID;

-- Service levels on business hours: a queue's SLA in working time (milliseconds), its
-- working hours, time zone (IANA) and holidays (dates, one per line) (domain::sla).
CREATE TABLE queue_sla (
    queue     TEXT PRIMARY KEY REFERENCES queues(name),
    sla_ms    INTEGER NOT NULL CHECK (sla_ms > 0),
    hours     TEXT NOT NULL,
    tz        TEXT NOT NULL,
    holidays  TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;

-- The kinds of events and audit records (checked by triggers, not CHECK constraints, so
-- that a new kind replaces a trigger instead of rebuilding the table).
CREATE TRIGGER events_kind_known BEFORE INSERT ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
             'undone', 'submitted', 'accepted', 'rejected') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
CREATE TRIGGER events_kind_kept BEFORE UPDATE OF kind ON events
WHEN NEW.kind NOT IN ('created', 'locked', 'renewed', 'released',
             'expired', 'taken_over', 'completed', 'failed', 'requeued', 'unlocked',
             'reassigned', 'skipped', 'noted', 'cancelled', 'field_changed', 'parked', 'woke',
             'undone', 'submitted', 'accepted', 'rejected') BEGIN
    SELECT RAISE(ABORT, 'unknown event kind');
END;
CREATE TRIGGER audit_kind_known BEFORE INSERT ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field', 'text', 'access', 'leaving') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
CREATE TRIGGER audit_kind_kept BEFORE UPDATE OF kind ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field', 'text', 'access', 'leaving') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;

-- Duplicates: the keys of duplicate-key fields, and the pairs people judged.
CREATE TABLE item_keys (
    item_id  INTEGER NOT NULL REFERENCES items(id),
    field    TEXT NOT NULL,
    key      TEXT NOT NULL,
    PRIMARY KEY (item_id, field)
) WITHOUT ROWID;
CREATE INDEX item_keys_key ON item_keys (field, key);

CREATE TABLE item_pairs (
    low      INTEGER NOT NULL REFERENCES items(id),
    high     INTEGER NOT NULL REFERENCES items(id),
    verdict  TEXT NOT NULL CHECK (verdict IN ('same', 'not_same')),
    actor    TEXT NOT NULL,
    at       INTEGER NOT NULL,
    PRIMARY KEY (low, high),
    CHECK (low < high)
) WITHOUT ROWID;
CREATE INDEX item_pairs_high ON item_pairs (high, low);

-- The items merged in a period, per queue (`report --by queue`: merged as duplicate).
CREATE INDEX items_merged ON items (finished_at) WHERE duplicate_of IS NOT NULL;
