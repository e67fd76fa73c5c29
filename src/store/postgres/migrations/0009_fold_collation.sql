-- PostgreSQL schema version 9. Never edit: append a new step instead.
-- Search folds case with lower(), which follows the database's character type: under
-- LC_CTYPE C or POSIX it lowers ASCII letters only (`σοφια` did not find `ΣΟΦΙΑ` there,
-- while SQLite, with Rust's tables, finds it), and under a Turkish one `I` becomes `ı`.
-- caseload_refold() (re)defines caseload_fold: with the database's own lower() where
-- that folds letter by letter as Rust does, else with a collation of the server that
-- does (PostgreSQL 17's builtin pg_c_utf8, else a UTF-8 libc locale, C.UTF-8 first;
-- never ICU, which lowers a word's final Σ to ς where Rust gives σ), else with the
-- database's own (ASCII only; `caseload doctor` says so). It returns the collation
-- chosen ('' for the database's own). Migration runs it; `caseload init` runs it again
-- when the fold no longer works (a schema restored on another server, whose collation
-- is missing or whose character type differs). Only the owner of caseload_fold can.
-- Speed (a search scans every row's text through the fold): text without a letter of
-- the table's range (U+00C0-U+017F: ASCII, Cyrillic, Greek, CJK…) is only lowered; other
-- text goes through translate(), whose cost is its length times the position of each
-- character in the table, so the table begins with the printable ASCII characters mapped
-- to themselves, the most frequent first (a 1 KiB body with one accent: ~0.1 ms instead
-- of ~0.6 ms).
CREATE FUNCTION caseload_refold() RETURNS text
LANGUAGE plpgsql
AS $refold$
DECLARE
    probe CONSTANT TEXT := 'IΟΔΟΣ Ж Ǆ';
    want CONSTANT TEXT := 'iοδοσ ж ǆ';
    ascii CONSTANT TEXT :=
        E' etaoinsrhldcumfpgwybvkxjqz0123456789.,-:/#@()''"_ETAOINSRHLDCUMFPGWYBVKXJQZ\n!?&*+;<=>[]\\^`{|}~$%\t';
    accented CONSTANT TEXT :=
        'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľĿŀŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž';
    base CONSTANT TEXT :=
        'aaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyyaaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz';
    coll TEXT;
    folds BOOLEAN;
    chosen TEXT := '';
    coll_clause TEXT := '';
BEGIN
    IF lower(probe) <> want THEN
        FOR coll IN
            SELECT collname FROM pg_collation
            WHERE collnamespace = 'pg_catalog'::regnamespace
              AND ((collprovider = 'b' AND collname = 'pg_c_utf8')
                   OR (collprovider = 'c'
                       AND collencoding IN (-1, pg_char_to_encoding(getdatabaseencoding()))
                       AND collctype ~* 'utf-?8$'))
            ORDER BY collprovider = 'b' DESC, collctype ~* '^c[.]' DESC, collname
        LOOP
            EXECUTE format('SELECT lower(%L COLLATE pg_catalog.%I) = %L', probe, coll, want)
                INTO folds;
            IF folds THEN
                chosen := coll;
                coll_clause := format(' COLLATE pg_catalog.%I', coll);
                EXIT;
            END IF;
        END LOOP;
        IF chosen = '' AND lower('I') <> 'i' THEN
            -- No collation folds beyond ASCII, and the database's own lowers I to ı:
            -- "C" at least folds ASCII as Rust does.
            chosen := 'C';
            coll_clause := ' COLLATE pg_catalog."C"';
        END IF;
    END IF;
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION caseload_fold(t text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT CASE WHEN octet_length(t) = char_length(t) OR t !~ '[À-ſ]'
                          THEN lower(t%s)
                          ELSE lower(translate(t%s, %L, %L)) END $$
        $f$, coll_clause, coll_clause, ascii || accented, ascii || base);
    RETURN chosen;
END
$refold$;

SELECT caseload_refold();
