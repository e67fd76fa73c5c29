-- Released in 0.1.0. Never edit: append a new step instead.
-- Counts by queue and state kept by triggers; when each user was last seen (for the
-- "locks lost since your last visit" list).
ALTER TABLE users ADD COLUMN last_seen INTEGER NULL;

CREATE TABLE item_counts (
    queue  TEXT NOT NULL,
    state  TEXT NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (queue, state)
) WITHOUT ROWID;

INSERT INTO item_counts (queue, state, n)
    SELECT queue, state, count(*) FROM items GROUP BY queue, state;

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
