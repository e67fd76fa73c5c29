//! Nothing an attacker can steer (issue 10): backups that never write through a planted
//! link, hostile names and paths made inert, an empty database setting refused, usage
//! errors as one line.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

use crate::support::cli::Env;

#[test]
fn backup_refuses_a_destination_that_is_a_link() {
    let env = Env::new();
    env.add("one");
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = env.dir.path().join("copy.db");
    symlink(&victim, &link).unwrap();
    let err = env.fails("x", &["backup", link.to_str().unwrap()], 1);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A dangling link is refused too (a plain open would create its target).
    let dangling = env.dir.path().join("dangling.db");
    let target = env.dir.path().join("created-by-link");
    symlink(&target, &dangling).unwrap();
    let err = env.fails("x", &["backup", dangling.to_str().unwrap()], 1);
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!target.exists(), "nothing was created through the link");
}

#[test]
fn backup_never_writes_through_planted_temporary_names() {
    let env = Env::new();
    env.add("one");
    let dir = env.dir.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o2777)).unwrap();
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The names a predictable temporary file would take, for the next PIDs, each a link
    // to the victim (what a member of the group could plant in a 2775 directory).
    let me = std::process::id();
    for pid in me..me + 2000 {
        symlink(&victim, dir.join(format!(".copy.db.partial-{pid}"))).unwrap();
        symlink(&victim, dir.join(format!(".copy.db.partial-{pid}-journal"))).unwrap();
    }
    let dest = dir.join("copy.db");
    let out = env.ok("x", &["backup", dest.to_str().unwrap()]);
    assert!(out.contains("Backed up to"), "{out}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(&dest).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the backup is a file of its own"
    );
    assert_eq!(
        meta.mode() & 0o777,
        0o600,
        "only its owner may read the copy"
    );
    // Nothing else is left behind: only the planted links and the copy.
    let extra: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "copy.db" && !n.starts_with(".copy.db.partial-"))
        .collect();
    assert!(extra.is_empty(), "left behind: {extra:?}");
    env.ok("x", &["--db", dest.to_str().unwrap(), "check"]);
}

#[test]
fn usage_errors_are_one_line_naming_the_help_to_read() {
    let env = Env::new();
    let cases: &[(&[&str], &str)] = &[
        (&["frobnicate"], "(see caseload --help)"),
        (&["fail", "1"], "(see caseload fail --help)"),
        (
            &["list", "--state", "sideways"],
            "(see caseload list --help)",
        ),
        (
            &["--db", "/x.db", "user", "set", "x", "--role", "king"],
            "(see caseload user set --help)",
        ),
        (
            &["queue", "set", "default"],
            "(see caseload queue set --help)",
        ),
        (&["show", "abc"], "(see caseload show --help)"),
    ];
    for (args, see) in cases {
        let err = env.fails("alice", args, 2);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("caseload: "), "{args:?}: {err}");
        assert!(err.trim_end().ends_with(see), "{args:?}: {err}");
    }
}

#[test]
fn an_empty_database_setting_is_refused_not_replaced_by_the_default() {
    let env = Env::new();
    let err = env.fails("alice", &["--db", "", "init"], 1);
    assert!(err.contains("--db is empty"), "{err}");
    let out = env
        .command("alice", &["init"])
        .env("CASELOAD_DB", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CASELOAD_DB is set but empty"), "{err}");
    // Nothing was created in the per-user default location.
    assert!(!env.dir.path().join("data").exists());
}

#[test]
fn lookalike_user_and_queue_names_are_refused() {
    let env = Env::new();
    env.ok("alice", &["init"]);
    let before = env.fingerprint();
    for bad in ["b\u{200B}ob", "bob\u{202E}", "\u{2066}bob", "b\u{FEFF}ob"] {
        let err = env.fails(bad, &["list"], 1);
        assert!(err.contains("invisible character"), "{err}");
        let err = env.fails("alice", &["add", "--title", "t", "--queue", bad], 1);
        assert!(err.contains("invisible character"), "{err}");
        let err = env.fails("alice", &["queue", "set", bad, "--lock-seconds", "60"], 1);
        assert!(err.contains("invisible character"), "{err}");
        let err = env.fails("alice", &["user", "set", bad, "--role", "staff"], 1);
        assert!(err.contains("invisible character"), "{err}");
    }
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn paths_echoed_on_success_and_the_log_are_sanitized() {
    let env = Env::new();
    let hostile = env.dir.path().join("q\u{1b}]0;owned\u{7}\u{202E}.db");
    let shown = env.ok("alice", &["--db", hostile.to_str().unwrap(), "init"]);
    let copy = env.dir.path().join("c\u{1b}[2J.db");
    let backed = env.ok(
        "alice",
        &[
            "--db",
            hostile.to_str().unwrap(),
            "backup",
            copy.to_str().unwrap(),
        ],
    );
    let rows = env.dir.path().join("rows\u{1b}[31m.jsonl");
    std::fs::write(&rows, "{\"title\": \"t\"}\n").unwrap();
    let imported = env.ok(
        "alice",
        &[
            "--db",
            hostile.to_str().unwrap(),
            "import",
            rows.to_str().unwrap(),
        ],
    );
    for out in [&shown, &backed, &imported] {
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202E}'),
            "{out:?}"
        );
        assert!(out.contains('␛'), "the escape is shown, not sent: {out:?}");
    }
    // A failing command logs its error, hostile path included: the log shows it, inert.
    let missing = env.dir.path().join("no\u{1b}]0;owned\u{7}\u{202E}/q.db");
    env.fails("alice", &["--db", missing.to_str().unwrap(), "list"], 1);
    let log = std::fs::read_to_string(env.dir.path().join("state/caseload/caseload.log")).unwrap();
    assert!(
        log.contains("command failed") && log.contains("no␛]0;owned␇<U+202E>"),
        "{log}"
    );
    assert!(
        !log.contains('\u{1b}') && !log.contains('\u{7}') && !log.contains('\u{202E}'),
        "{log:?}"
    );
}
