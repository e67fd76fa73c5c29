-- SQLite schema version 29. Never edit: append a new step instead.
-- Fewer pages per claim and per complete (issue 31 §2; BENCHMARKS.md, "Against the
-- physical ceiling"): every change of a lock rewrote a page of each of the four partial
-- indexes of the held items, and a commit's fsync grows with its pages. The held items are
-- few (a lock per person at a time, and expired ones until taken), so two indexes serve
-- every read of them: `items_lock_user` (a user's own locks: Mine, resume, the WIP limit)
-- and `items_held` (per queue with the expiry and the holder: the metrics; read whole, by
-- expiry: reaping, take-over, `list --state expired`, and by lock time: the Locks view,
-- a sort of the held items alone).
DROP INDEX items_lock_time;
DROP INDEX items_lock_expires;
