//! Times as a person reads them: the CLI's text output is local (`TZ` honoured), JSON stays
//! RFC 3339 UTC, and "today" (`history` without `--since`) starts at local midnight.

use crate::support::cli::{Env, explain};
use chrono::{FixedOffset, TimeZone, Utc};
use serde_json::Value;

fn run_tz(env: &Env, tz: &str, user: &str, args: &[&str]) -> String {
    let out = env.command(user, args).env("TZ", tz).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        explain(user, args, &out, "exit 0")
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn text_output_is_local_time_and_json_stays_utc() {
    let env = Env::init("producer");
    let id = env.ok(
        "producer",
        &[
            "add",
            "--title",
            "Due soon",
            "--due",
            "2026-12-01T16:00:00Z",
        ],
    );
    let id = id.trim();
    let berlin = run_tz(&env, "Europe/Berlin", "alice", &["show", id]);
    assert!(
        berlin.contains("due:        2026-12-01 17:00:00 +01:00"),
        "{berlin}"
    );
    // Summer time is an hour further on, as the wall clock is.
    let id2 = env.ok(
        "producer",
        &["add", "--title", "Summer", "--due", "2026-07-01T16:00:00Z"],
    );
    let summer = run_tz(&env, "Europe/Berlin", "alice", &["show", id2.trim()]);
    assert!(
        summer.contains("due:        2026-07-01 18:00:00 +02:00"),
        "{summer}"
    );
    let utc = run_tz(&env, "UTC", "alice", &["show", id]);
    assert!(
        utc.contains("due:        2026-12-01 16:00:00 +00:00"),
        "{utc}"
    );
    let list = run_tz(&env, "America/New_York", "alice", &["list"]);
    assert!(list.contains("2026-12-01 11:00"), "{list}");
    let json: Value = serde_json::from_str(&run_tz(
        &env,
        "Europe/Berlin",
        "alice",
        &["show", id, "--json"],
    ))
    .unwrap();
    assert_eq!(json["due_at"], "2026-12-01T16:00:00.000Z");
    assert!(
        json["history"][0]["at"].as_str().unwrap().ends_with('Z'),
        "{json}"
    );
}

/// Local midnight of today at a fixed `offset` from UTC, in Unix milliseconds.
fn midnight_at(offset_hours: i32) -> i64 {
    let zone = FixedOffset::east_opt(offset_hours * 3600).unwrap();
    let today = Utc::now().with_timezone(&zone).date_naive();
    zone.from_local_datetime(&today.and_hms_opt(0, 0, 0).unwrap())
        .unwrap()
        .timestamp_millis()
}

#[test]
fn history_today_starts_at_local_midnight_of_tz() {
    // POSIX zone names count the other way: Etc/GMT-14 is UTC+14.
    for (tz, offset) in [("Etc/GMT-14", 14), ("UTC", 0), ("Etc/GMT+12", -12)] {
        let env = Env::init("producer");
        let before = env.add("Late yesterday");
        let after = env.add("Early today");
        env.ok("alice", &["claim", "--id", &before.to_string()]);
        env.ok("alice", &["claim", "--id", &after.to_string()]);
        let midnight = midnight_at(offset);
        let conn = rusqlite::Connection::open(&env.db).unwrap();
        for (id, at) in [(before, midnight - 60_000), (after, midnight + 1)] {
            conn.execute(
                "UPDATE events SET at = ?1 WHERE item_id = ?2 AND actor = 'alice'",
                (at, id),
            )
            .unwrap();
        }
        drop(conn);
        let v: Value =
            serde_json::from_str(&run_tz(&env, tz, "alice", &["history", "--json"])).unwrap();
        let ids: Vec<i64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["item_id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, vec![after], "TZ={tz}: {v}");
        // The text lines show the same events at local time with the offset.
        let text = run_tz(&env, tz, "alice", &["history"]);
        let sign = if offset < 0 { '-' } else { '+' };
        let offset_text = format!("{sign}{:02}:00", offset.abs());
        assert!(text.contains(&offset_text), "TZ={tz}: {text}");
        assert_eq!(text.lines().count(), 1, "TZ={tz}: {text}");
    }
}
