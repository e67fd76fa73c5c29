//! `caseload queue set Q --sla …` from the command line (issue 28 §4): the SLA and its
//! calendar are checked before anything is written (one line naming the flag, exit 1),
//! and a new item without --due gets a due time from it.

use crate::support::cli::Env;

#[test]
fn queue_set_sla_checks_its_calendar_and_new_items_get_due_times() {
    let env = Env::init("sup");
    env.ok("sup", &["queue", "set", "helpdesk", "--create"]);
    let holidays = env.dir.path().join("holidays.txt");
    std::fs::write(
        &holidays,
        "# closed\n2026-12-24 Christmas Eve\n2026-12-25\n",
    )
    .unwrap();
    let bad_file = env.dir.path().join("bad.txt");
    std::fs::write(&bad_file, "2026-12-24\n24.12.2026\n").unwrap();
    let before = env.fingerprint();
    for (args, says) in [
        (vec!["--sla", "2d"], "--sla: SLA '2d'"),
        (
            vec!["--sla", "4h", "--hours", "9-5"],
            "--hours: working hours '9-5'",
        ),
        (
            vec!["--sla", "4h", "--tz", "Europe/Berln"],
            "--tz: 'Europe/Berln'",
        ),
        (
            vec!["--sla", "4h", "--holidays", bad_file.to_str().unwrap()],
            "line 2: '24.12.2026' is not a date",
        ),
        (vec!["--hours", "always"], "has no SLA yet"),
    ] {
        let mut all = vec!["queue", "set", "helpdesk"];
        all.extend(args);
        let err = env.fails("sup", &all, 1);
        assert!(err.contains(says), "{all:?}: {err}");
    }
    env.fails("alice", &["queue", "set", "helpdesk", "--sla", "4h"], 5);
    assert_eq!(env.fingerprint(), before, "refusals change nothing");
    let out = env.ok(
        "sup",
        &[
            "queue",
            "set",
            "helpdesk",
            "--sla",
            "4h",
            "--tz",
            "Europe/Berlin",
            "--holidays",
            holidays.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out,
        "Queue helpdesk: SLA 4h of working time, Mon-Fri 08:00-17:00 (Europe/Berlin), 2 holiday(s)\n"
    );
    let id = env.ok(
        "producer",
        &["add", "--queue", "helpdesk", "--title", "printer"],
    );
    let v = env.show(id.trim().parse().unwrap());
    assert!(v["due_at"].is_string(), "an SLA due time: {v}");
    let given = env.ok(
        "producer",
        &[
            "add",
            "--queue",
            "helpdesk",
            "--title",
            "b",
            "--due",
            "2030-01-01T00:00:00Z",
        ],
    );
    let v = env.show(given.trim().parse().unwrap());
    assert_eq!(
        v["due_at"], "2030-01-01T00:00:00.000Z",
        "a given due time is kept"
    );
    // `default` is there from its first use, as for items.
    let out = env.ok(
        "sup",
        &[
            "queue", "set", "default", "--sla", "1h30m", "--hours", "always", "--tz", "UTC",
        ],
    );
    assert_eq!(
        out,
        "Queue default: SLA 1h30m of working time, always (UTC), 0 holiday(s)\n"
    );
    let out = env.ok("sup", &["queue", "set", "helpdesk", "--sla", "none"]);
    assert_eq!(out, "Queue helpdesk: no SLA (due times only as given)\n");
    let out = env.ok("sup", &["history"]);
    assert!(out.contains("queue helpdesk: sla="), "audited: {out}");
}

/// `queue set Q` with settings and an SLA is one change, both or neither (found by
/// scripts/soak: `--lock-seconds 30 --sla none` on a queue without an SLA saved and
/// audited the settings, then said "already has that SLA; nothing changed", exit 1). A
/// refused SLA leaves the settings as they were; an SLA already as asked does not refuse
/// the settings beside it; alone, it is still refused.
#[test]
fn queue_settings_and_their_sla_are_one_change() {
    let env = Env::init("sup");
    env.ok("sup", &["queue", "set", "helpdesk", "--create"]);
    let before = env.fingerprint();
    let set = |more: &[&'static str]| {
        let mut all = vec!["queue", "set", "helpdesk", "--lock-seconds", "600"];
        all.extend(more);
        all
    };
    let err = env.fails("sup", &set(&["--hours", "always"]), 1);
    assert!(err.contains("has no SLA yet"), "{err}");
    assert_eq!(
        env.fingerprint(),
        before,
        "a refused SLA changes no setting"
    );
    let out = env.ok("sup", &set(&["--sla", "none"]));
    assert!(out.contains("lock 600s"), "{out}");
    assert!(out.contains("no SLA"), "{out}");
    let queues = env.ok("sup", &["queue", "list"]);
    assert!(queues.contains("lock 600s"), "{queues}");
    // The same again writes nothing and says so (scripts/soak judges a silent exit 0
    // that wrote nothing a lost write).
    let set_again = env.fingerprint();
    let out = env.ok("sup", &set(&["--sla", "none"]));
    assert!(
        out.contains("nothing changed: queue 'helpdesk' had these settings already"),
        "{out}"
    );
    assert_eq!(env.fingerprint(), set_again, "nothing written");
    let err = env.fails("sup", &["queue", "set", "helpdesk", "--sla", "none"], 1);
    assert!(
        err.contains("already has that SLA; nothing changed"),
        "{err}"
    );
    let out = env.ok("sup", &set(&["--sla", "4h", "--hours", "always"]));
    assert!(out.contains("SLA 4h of working time, always"), "{out}");
}
