-- Never edit: append a new step instead.
-- Search: the text folding of domain::search (accents of Latin letters removed, lower
-- case), for `list --search` and the `/` filter (src/store/postgres/reads.rs).
CREATE FUNCTION caseload_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT lower(translate(t,
    'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľĿŀŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž',
    'aaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyyaaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz')) $$;

-- The take order of each queue: 'priority' (priority, then age) or 'due'.
ALTER TABLE queues ADD COLUMN take_order TEXT NOT NULL DEFAULT 'priority'
    CHECK (take_order IN ('priority', 'due'));
-- Take order of a queue ordered by due time: overdue and soonest due first, items without
-- a due time after those with one (the CASE sorts them last), then priority and age.
CREATE INDEX items_take_due ON items (queue, (CASE WHEN due_at IS NULL THEN 9223372036854775807 ELSE due_at END), priority DESC, created_at, id) WHERE state = 'open';
