-- PostgreSQL schema version 18. Never edit: append a new step instead.
-- A lock keeps the age it was given: `lock_expires_at` is stored when a lock is taken or
-- renewed (then plus the queue's lock age then), so a change of the queue's age applies
-- to new locks and renewals only, and the take-over condition is one comparison on an
-- index (`lock_expires_at <= now`). From here on `lock_time` is when the lock was taken (a
-- renewal moves only the expiry): the Locks view's time held, oldest first.
--
-- Current locks expire when they expired before: their last renewal plus their queue's
-- age (an assignment keeps the far-future mark in both columns).
ALTER TABLE items ADD COLUMN lock_expires_at BIGINT NULL;
UPDATE items SET lock_expires_at = CASE WHEN lock_time >= 253402300799999 THEN lock_time
    ELSE lock_time + (SELECT q.lock_seconds * 1000 FROM queues q WHERE q.name = items.queue) END
WHERE lock_user IS NOT NULL;
-- And a current lock's time becomes its take: its last take on record (what the Locks view
-- showed as time held), else its last renewal as before.
UPDATE items SET lock_time = coalesce((SELECT max(e.at) FROM events e
    WHERE e.item_id = items.id AND e.kind IN ('locked', 'taken_over', 'reassigned', 'undone')
    AND e.at <= items.lock_time), lock_time)
WHERE lock_user IS NOT NULL AND lock_time < 253402300799999;
-- A holder without an expiry would hold for ever: both or neither, as for lock_time.
ALTER TABLE items ADD CONSTRAINT items_lock_expires_check
    CHECK ((lock_user IS NULL) = (lock_expires_at IS NULL));

-- Held locks by expiry: the claim's take-over, reaping, `list --state expired`.
CREATE INDEX items_lock_expires ON items (lock_expires_at) WHERE lock_user IS NOT NULL;

-- The metrics' held locks (0016's covering index) are counted expired by their expiry now.
DROP INDEX items_held;
CREATE INDEX items_held ON items (queue, lock_expires_at, lock_user) WHERE lock_user IS NOT NULL;
