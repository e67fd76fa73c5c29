-- Released in 0.2.0. Never edit: append a new step instead.
-- Each item's comment thread in a table of its own, seeded from the comments earlier
-- versions kept as `noted` events (those events stay in the history).
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
