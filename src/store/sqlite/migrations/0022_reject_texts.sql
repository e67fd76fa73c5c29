-- SQLite schema version 22. Never edit: append a new step instead.
-- Ready-made texts gain a purpose: 'reject', the reasons a reviewer gives when rejecting
-- an item back to its maker (issue 29 §1). The table is small (a few texts per queue), so
-- it is rebuilt with the wider CHECK rather than edited in place.
CREATE TABLE queue_texts_new (
    queue    TEXT NOT NULL REFERENCES queues(name),
    code     TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 32),
    purpose  TEXT NOT NULL CHECK (purpose IN ('result', 'fail', 'skip', 'release', 'park',
                                              'comment', 'reject')),
    text     TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
    PRIMARY KEY (queue, code)
) WITHOUT ROWID;
INSERT INTO queue_texts_new (queue, code, purpose, text)
    SELECT queue, code, purpose, text FROM queue_texts;
DROP TABLE queue_texts;
ALTER TABLE queue_texts_new RENAME TO queue_texts;
