-- SQLite schema version 28. Never edit: append a new step instead.
-- The search index is caseload's own instead of FTS5 (issue 31 §1; BENCHMARKS.md, "Search
-- straight after an import"): for each batch of indexed items (`search_batches`) and each
-- trigram of their folded words (`tri`, a word's end padded with line ends), how many
-- items hold it (`n`) and their ids (`ids`, varints of the differences), written once per
-- batch from a table built in memory (src/store/sqlite/postings.rs). FTS5 looked every
-- trigram of every item up in its own table and merged its segments again and again:
-- indexing cost about three times the import's own rows. A rowid table, its key in an
-- index of its own: in a WITHOUT ROWID tree a lookup's binary search reads the whole of
-- every row it compares, overflow pages included (a common trigram's list is ~1 MB per
-- batch at 1M items: `müller` took 40 ms of CPU), where the index holds only the keys. The index starts empty behind
-- the mark (searches scan meanwhile); the next import or a TUI left idle builds it. A
-- caseload of schema 26 or older still running fails to add to the FTS5 table (gone) and
-- changes nothing.
DROP TABLE item_search_terms;
DROP TABLE item_search;
CREATE TABLE search_batches (
    batch INTEGER PRIMARY KEY,
    items INTEGER NOT NULL
);
CREATE TABLE search_postings (
    batch INTEGER NOT NULL,
    tri   TEXT NOT NULL,
    n     INTEGER NOT NULL,
    ids   BLOB NOT NULL,
    PRIMARY KEY (batch, tri)
);
UPDATE search_meta SET indexed = 0;
DELETE FROM search_dirty;
