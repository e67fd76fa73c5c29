-- PostgreSQL schema version 27. Never edit: append a new step instead.
-- caseload_fold in PL/pgSQL instead of SQL (the same fold, the same results: the stored
-- search_text of migration 23 stays as it is). The stored column calls it with the
-- searched columns joined into one text, an argument PostgreSQL does not inline a SQL
-- function over (it names `t` more than once), so each statement that wrote a row set up
-- the SQL function's executor anew: parsed, planned and started for every inserted item.
-- PL/pgSQL keeps its plans for the session and evaluates the two branches as simple
-- expressions. Measured (BENCHMARKS.md, "Search on PostgreSQL with pg_trgm"): `caseload
-- import` into a schema with the search index, 13-20 % less server time per INSERT; the
-- fold of a row's joined text in a scan (20,000 rows in one statement) the same within
-- noise.
-- caseload_refold() is redefined to create it so (`caseload init` runs it again when the
-- fold no longer works), and run once here.
CREATE OR REPLACE FUNCTION caseload_refold() RETURNS text
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
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
        AS $$ BEGIN
            IF octet_length(t) = char_length(t) OR t !~ '[À-ſ]' THEN
                RETURN lower(t%s);
            END IF;
            RETURN lower(translate(t%s, %L, %L));
        END $$
        $f$, coll_clause, coll_clause, ascii || accented, ascii || base);
    RETURN chosen;
END
$refold$;

SELECT caseload_refold();
