-- SQLite schema version 23. Never edit: append a new step instead.
-- Who may take what, team leads, people who leave (issue 29 §2-§4).
-- * `users.take_limited` / `review_limited`: when set, the person takes (reviews) only
--   from the queues `user_queues` lists for them under 'take' ('review'); else from all.
--   The claim's conditional write checks it itself (store::sql::eligible!): one probe of
--   the users row by its key and, for a limited person, one of `user_queues`.
-- * role 'lead': a supervisor for the queues they may take from only.
-- * `left_at` / `left_reason`: marked as leaving (`user set NAME --leaving`); such a
--   person takes no work and is assigned none.
ALTER TABLE users ADD COLUMN take_limited INTEGER NOT NULL DEFAULT 0
    CHECK (take_limited IN (0, 1));
ALTER TABLE users ADD COLUMN review_limited INTEGER NOT NULL DEFAULT 0
    CHECK (review_limited IN (0, 1));
ALTER TABLE users ADD COLUMN left_at INTEGER NULL;
ALTER TABLE users ADD COLUMN left_reason TEXT NULL;

-- The role's CHECK gains 'lead': the table's text is edited in place as 0015 did (the
-- ALTERs above moved the schema cookie).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (role IN (''staff'', ''supervisor''))',
    'CHECK (role IN (''staff'', ''supervisor'', ''lead''))')
WHERE type = 'table' AND name = 'users';
PRAGMA writable_schema = RESET;

CREATE TABLE user_queues (
    name   TEXT NOT NULL,
    kind   TEXT NOT NULL CHECK (kind IN ('take', 'review')),
    queue  TEXT NOT NULL,
    PRIMARY KEY (name, kind, queue)
) WITHOUT ROWID;

DROP TRIGGER audit_kind_known;
DROP TRIGGER audit_kind_kept;
CREATE TRIGGER audit_kind_known BEFORE INSERT ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field', 'text', 'access', 'leaving') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
CREATE TRIGGER audit_kind_kept BEFORE UPDATE OF kind ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field', 'text', 'access', 'leaving') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
