-- Never edit: append a new step instead.
-- `source`: where a record came from (`caseload add --source NAME`, a column of import and
-- export); search reads it from the row (src/store/postgres/reads.rs).
ALTER TABLE items ADD COLUMN source TEXT NULL;
