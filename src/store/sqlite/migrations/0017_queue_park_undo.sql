-- SQLite schema version 17. Never edit: append a new step instead.
-- Two queue settings that were constants: how long a woken park waits for its owner
-- before it returns to the pool (1 h before), and how long after a complete, fail,
-- release, skip or park its maker may undo it (30 s before; 0: no undo). Audited with
-- the other settings (store/ops/supervise.rs's settings_json).
ALTER TABLE queues ADD COLUMN park_grace_seconds INTEGER NOT NULL DEFAULT 3600
    CHECK (park_grace_seconds BETWEEN 60 AND 604800);
ALTER TABLE queues ADD COLUMN undo_seconds INTEGER NOT NULL DEFAULT 30
    CHECK (undo_seconds BETWEEN 0 AND 3600);
