-- SQLite schema version 25. Never edit: append a new step instead.
-- The search index merges its segments less often and holds more in memory before it
-- writes one (issue 31 §1; BENCHMARKS.md, "Search straight after an import"). FTS5 writes
-- each transaction's rows as a new segment (and whenever its in-memory table passes
-- `hashsize`, 1 MB by default: about 1,000 items of 1 KiB), and by default merges every
-- 4 segments of a level into one, so an item's entries are rewritten once per level:
-- about five times at a million items. With `automerge` 16 and a 16 MB table, an
-- import's indexing transactions (up to 20,000 rows: src/import/index.rs) each write one
-- segment and a segment is rewritten about once in a million items: 2-2.5x the rows/s.
-- A lookup reads at most ~16 segments per level more (a rare trigram: well under 1 ms).
-- Both are kept in the index's own configuration (`item_search_config`), so every
-- program that writes the index, `sqlite3` included, uses them.
INSERT INTO item_search (item_search, rank) VALUES ('automerge', 16);
INSERT INTO item_search (item_search, rank) VALUES ('hashsize', 16777216);
