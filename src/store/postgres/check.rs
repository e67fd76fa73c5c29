//! `caseload check` on PostgreSQL: the schema's invariants and every stored word caseload
//! must be able to read (the server itself keeps the pages and the JSON sound).

use super::migrate::{LATEST, schema_version};
use super::open::{Conn, TxResult};
use crate::store::check::{figure_day_finding, figure_days_sql, invariants};

pub(super) fn check(c: &mut Conn) -> TxResult<Vec<String>> {
    let mut problems = Vec::new();
    for (sql, row, what) in invariants() {
        for r in c.client.query(&sql, &[])? {
            let id: i64 = r.get(0);
            problems.push(format!("{row} #{id} {what}"));
        }
    }
    for r in c.client.query(
        "SELECT coalesce(a.queue, k.queue), coalesce(a.state, k.state), \
         coalesce(a.n, 0)::bigint, coalesce(k.n, 0)::bigint \
         FROM (SELECT queue, state, count(*) AS n FROM items GROUP BY queue, state) a \
         FULL OUTER JOIN (SELECT queue, state, sum(n) AS n FROM item_counts \
         GROUP BY queue, state) k ON k.queue = a.queue AND k.state = a.state \
         WHERE coalesce(a.n, 0) <> coalesce(k.n, 0)",
        &[],
    )? {
        let (q, s, actual, kept): (String, String, i64, i64) =
            (r.get(0), r.get(1), r.get(2), r.get(3));
        problems.push(format!(
            "counts: queue '{q}' has {actual} {s} items but the kept count says {kept}"
        ));
    }
    let sorted = "(SELECT coalesce(string_agg(x, ';' ORDER BY x COLLATE \"C\"), '') \
                  FROM unnest(string_to_array({}, ';')) AS x WHERE x <> '')";
    for r in c
        .client
        .query(&figure_days_sql(sorted, " COLLATE \"C\""), &[])?
    {
        let (day, queue, holder): (i64, String, String) = (r.get(0), r.get(1), r.get(2));
        problems.push(figure_day_finding(day, &queue, &holder));
    }
    match schema_version(c)? {
        Some(v) if v == LATEST => {}
        v => problems.push(format!(
            "schema version is {}, expected {LATEST}",
            v.unwrap_or(0)
        )),
    }
    Ok(problems)
}
