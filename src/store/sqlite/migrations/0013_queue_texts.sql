-- SQLite schema version 13. Never edit: append a new step instead.
-- Ready-made texts per queue (results, fail/skip/release/park reasons, comments): each
-- under a code unique within its queue, which the event keeps when a holder chooses the
-- text, so that `report --by reason` counts it. Written by supervisors with an audit
-- record ('text', subject QUEUE.CODE).

CREATE TABLE queue_texts (
    queue    TEXT NOT NULL REFERENCES queues(name),
    code     TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 32),
    purpose  TEXT NOT NULL CHECK (purpose IN ('result', 'fail', 'skip', 'release', 'park',
                                              'comment')),
    text     TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    PRIMARY KEY (queue, code)
) WITHOUT ROWID;

DROP TRIGGER audit_kind_known;
DROP TRIGGER audit_kind_kept;
CREATE TRIGGER audit_kind_known BEFORE INSERT ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field', 'text') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
CREATE TRIGGER audit_kind_kept BEFORE UPDATE OF kind ON audit
WHEN NEW.kind NOT IN ('role', 'login', 'queue', 'field', 'text') BEGIN
    SELECT RAISE(ABORT, 'unknown audit kind');
END;
