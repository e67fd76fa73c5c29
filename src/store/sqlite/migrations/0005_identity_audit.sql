-- Never edit: append a new step instead.
-- Identity bound to the real user: the OS login a caseload name is bound to (NULL: only
-- the login of the same name may use it). The audit of changes that are not about one
-- item: roles, login bindings and queue settings, with who (name and OS login), when,
-- and old and new value (JSON).
ALTER TABLE users ADD COLUMN login TEXT NULL;

CREATE TABLE audit (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    actor      TEXT NOT NULL,
    real_user  TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('role', 'login', 'queue')),
    subject    TEXT NOT NULL,
    old_value  TEXT NULL CHECK (old_value IS NULL OR json_valid(old_value)),
    new_value  TEXT NOT NULL CHECK (json_valid(new_value))
);
CREATE INDEX audit_at ON audit (at);
