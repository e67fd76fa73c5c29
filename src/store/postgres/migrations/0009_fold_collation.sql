-- PostgreSQL schema version 9. Never edit: append a new step instead.
-- Search folds case with lower(), which follows the database's character type: under
-- LC_CTYPE C or POSIX it lowers ASCII letters only, so `σοφια` did not find `ΣΟΦΙΑ`
-- there while SQLite (Rust's tables) finds it. Where the database's own lower() does not
-- fold beyond ASCII, caseload_fold names a collation of the server that does, letter by
-- letter as Rust does: PostgreSQL 17's builtin pg_c_utf8, else a UTF-8 libc locale
-- (C.UTF-8 first). ICU is not used: it lowers a word's final Σ to ς, Rust to σ. When the
-- server has none, the function stays as it was and `caseload doctor` says so.
DO $fold$
DECLARE
    probe CONSTANT TEXT := 'ΟΔΟΣ Ж Ǆ Ꞵ';
    want CONSTANT TEXT := 'οδοσ ж ǆ ꞵ';
    coll TEXT;
    folds BOOLEAN;
BEGIN
    IF lower(probe) = want THEN
        RETURN;
    END IF;
    FOR coll IN
        SELECT collname FROM pg_collation
        WHERE collnamespace = 'pg_catalog'::regnamespace
          AND ((collprovider = 'b' AND collname = 'pg_c_utf8')
               OR (collprovider = 'c'
                   AND collencoding IN (-1, pg_char_to_encoding(getdatabaseencoding()))
                   AND collctype ~* 'utf-?8$'))
        ORDER BY collprovider = 'b' DESC, collctype ~* '^c\.' DESC, collname
    LOOP
        EXECUTE format('SELECT lower(%L COLLATE %I) = %L', probe, coll, want) INTO folds;
        IF folds THEN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION caseload_fold(t text) RETURNS text
                LANGUAGE sql IMMUTABLE PARALLEL SAFE
                AS $$ SELECT lower(translate(t COLLATE pg_catalog.%I,
    'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľĿŀŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž',
    'aaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyyaaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz')) $$
                $f$, coll);
            RETURN;
        END IF;
    END LOOP;
END
$fold$;
