-- Released in 0.2.0 (PostgreSQL schema version 3). Never edit: append a new step instead.
-- Items no longer get a `created` event row (an import of a million rows wrote a million
-- events): the row's created_at and created_by are the record, and history shows them as
-- the item's first event. The creator's OS login, which that event carried, is kept here.
ALTER TABLE items ADD COLUMN created_os TEXT NULL;
-- Items by who created them and when: a user's day (`history`, the TUI's activity) shows
-- their creations, which have no event row.
CREATE INDEX items_created_by ON items (created_by, created_at);
