-- Never edit: append a new step instead.
-- Search for words under three characters: the index holds, for each item,
--   caseload_fold(concat_ws(char(10), title, body, notes, result, params, error)) || char(10) || char(10)
-- (src/store/sqlite/search.rs, INDEXED_TEXT; a test keeps the two the same), so that every
-- occurrence of a one- or two-character word begins a trigram, also at the very end of the
-- text; `item_search_terms` lists the index's trigrams (term, doc, cnt), and a short word
-- is looked up through the range of trigrams that begin with it. The text is folded
-- already, so the tokenizer keeps case (a smaller index, faster to build and read).
-- The column is named `folded`, no longer `text`: a caseload of schema 8 still running
-- when another one upgrades the file (a TUI left open over a package upgrade) would go on
-- indexing rows without the terminators; its indexing now fails on the column's name and
-- changes nothing (it retries quietly), while its searches, which name only the table,
-- still work.
-- The old index is dropped, not converted: re-indexing a large file takes minutes, so it is
-- left to the TUI's background indexing behind the mark (searches scan meanwhile).
DROP TABLE item_search;
CREATE VIRTUAL TABLE item_search USING fts5(
    folded, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1');
CREATE VIRTUAL TABLE item_search_terms USING fts5vocab(item_search, 'row');
UPDATE search_meta SET indexed = 0;
DELETE FROM search_dirty;
