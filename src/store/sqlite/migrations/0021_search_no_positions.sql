-- SQLite schema version 21. Never edit: append a new step instead.
-- The search index keeps no positions (detail = none). Every lookup into it is of one
-- trigram, or of several joined by OR (src/store/sqlite/search_plan.rs), never a phrase,
-- so the positions were never read; without them the index is about a fifth of the size
-- and about twice as fast to fill, which `caseload import` now does after writing its rows
-- (issue 31 §1; BENCHMARKS.md, "Search"). Its rows now hold each distinct folded word of
-- an item's text once, one per line, instead of the whole folded text (the trigrams of
-- every word a search can match are the same; fewer to index). The version is unchanged:
-- a caseload of schema 10 to 20 still running adds rows of the whole text, whose trigrams
-- are a superset of those, so its rows are found the same. The old index is dropped, not
-- converted: the mark goes back to 0 and the next import, or a TUI left idle, builds it
-- again (searches scan meanwhile).
DROP TABLE item_search_terms;
DROP TABLE item_search;
CREATE VIRTUAL TABLE item_search USING fts5(
    doc, content = '', contentless_delete = 1, detail = none,
    tokenize = 'trigram case_sensitive 1');
CREATE VIRTUAL TABLE item_search_terms USING fts5vocab(item_search, 'row');
UPDATE search_meta SET indexed = 0;
DELETE FROM search_dirty;
