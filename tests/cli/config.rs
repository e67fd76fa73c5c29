//! The config files: real files in a temp dir, read by the library and by the real binary.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::cli::Env;
use caseload::config::{Config, Notify};
use caseload::store::location::{Location, Source};

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

struct Files {
    _dir: tempfile::TempDir,
    system: PathBuf,
    user: PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    Files {
        system: dir.path().join("etc/caseload/config.toml"),
        user: dir.path().join("home/.config/caseload/config.toml"),
        _dir: dir,
    }
}

#[test]
fn no_files_give_the_defaults() {
    let f = files();
    let c = Config::load_files(&f.system, Some(&f.user)).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.notify, Notify::Bell, "notify defaults to the bell");
    assert!(c.db.is_none());
}

#[test]
fn the_user_file_wins_over_the_system_file_key_by_key() {
    let f = files();
    write(
        &f.system,
        "db = \"/srv/caseload/queue.db\"\nnotify = \"both\"\n",
        0o644,
    );
    let c = Config::load_files(&f.system, Some(&f.user)).unwrap();
    assert_eq!(
        c.db,
        Some((
            "/srv/caseload/queue.db".into(),
            Source::SystemConfig(f.system.clone())
        ))
    );
    assert_eq!(c.notify, Notify::Both);

    write(&f.user, "db = \"/home/a/mine.db\"\n", 0o644);
    let c = Config::load_files(&f.system, Some(&f.user)).unwrap();
    assert_eq!(
        c.db,
        Some(("/home/a/mine.db".into(), Source::UserConfig(f.user.clone())))
    );
    assert_eq!(
        c.notify,
        Notify::Both,
        "a key the user leaves out comes from the system file"
    );

    write(&f.user, "notify = \"off\"\n", 0o644);
    let c = Config::load_files(&f.system, Some(&f.user)).unwrap();
    assert_eq!(c.notify, Notify::Off);
    assert_eq!(
        c.db.as_ref().map(|(_, s)| s),
        Some(&Source::SystemConfig(f.system.clone()))
    );
    // And the flag and environment still come first; the source says which won.
    let (loc, src) = c.resolve_db(None, None).unwrap();
    assert_eq!(loc, Location::File("/srv/caseload/queue.db".into()));
    assert_eq!(src.describe(), f.system.display().to_string());
    assert_eq!(c.resolve_db(None, Some("/e.db")).unwrap().1, Source::Env);
    assert_eq!(
        c.resolve_db(Some("/f.db"), Some("/e.db")).unwrap().1,
        Source::Flag
    );
}

#[test]
fn an_unknown_key_names_file_line_and_the_known_keys() {
    let f = files();
    write(&f.user, "# mine\ndb = \"/q.db\"\nnotfy = \"bell\"\n", 0o644);
    let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
    assert_eq!(e.line, Some(3));
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("{}:3: unknown key `notfy`", f.user.display())),
        "{shown}"
    );
    assert!(
        shown.contains("known keys: db (") && shown.contains("notify ("),
        "{shown}"
    );
}

#[test]
fn a_bad_value_names_file_and_line() {
    let f = files();
    write(&f.system, "\n\nnotify = \"loud\"\n", 0o644);
    let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
    assert_eq!((e.path.as_path(), e.line), (f.system.as_path(), Some(3)));
    assert!(
        e.message.contains("\"loud\"") && e.message.contains("known keys"),
        "{e}"
    );

    write(&f.system, "db = \"\"\n", 0o644);
    let e = Config::load_files(&f.system, None).unwrap_err();
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("db must not be empty"), "{e}");

    write(&f.system, "db = 42\n", 0o644);
    let e = Config::load_files(&f.system, None).unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");

    write(&f.system, "notify = \"off\"\ndb = \"queue.db\"\n", 0o644);
    let e = Config::load_files(&f.system, None).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("not an absolute path"), "{e}");
}

#[test]
fn files_that_are_not_config_files_are_named_not_read_forever() {
    let f = files();
    std::fs::create_dir_all(f.user.parent().unwrap()).unwrap();
    // A FIFO would block a plain read forever.
    let status = std::process::Command::new("mkfifo")
        .arg(&f.user)
        .status()
        .unwrap();
    assert!(status.success());
    let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
    assert!(e.to_string().ends_with(": is not a regular file"), "{e}");
    std::fs::remove_file(&f.user).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &f.user).unwrap();
    let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
    assert!(e.message.contains("not a regular file"), "{e}");
    std::fs::remove_file(&f.user).unwrap();
    std::fs::write(&f.user, vec![b'#'; 2 << 20]).unwrap();
    let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
    assert!(e.message.contains("larger than 1 MiB"), "{e}");
    std::fs::write(&f.user, b"notify = \"off\"\ndb = \"/q\xff.db\"\n").unwrap();
    let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("not valid UTF-8"), "{e}");
    // A byte-order mark and CRLF line ends, as Windows editors write them, are fine.
    write(&f.user, "\u{feff}# mine\r\nnotify = \"off\"\r\n", 0o644);
    let c = Config::load_files(&f.system, Some(&f.user)).unwrap();
    assert_eq!(c.notify, Notify::Off);
}

#[test]
fn a_password_others_can_read_is_refused_without_showing_it() {
    let f = files();
    let url = "db = \"postgres://bob:s3cret@db.example/work\"\n";
    for mode in [0o644, 0o640, 0o604] {
        write(&f.user, url, mode);
        let e = Config::load_files(&f.system, Some(&f.user)).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.contains("others can read it") && shown.contains("chmod 600"),
            "{mode:o}: {shown}"
        );
        assert!(!shown.contains("s3cret"), "{shown}");
    }
    write(&f.user, url, 0o600);
    let c = Config::load_files(&f.system, Some(&f.user)).unwrap();
    assert_eq!(c.db.unwrap().0, "postgres://bob:s3cret@db.example/work");
    // A password in the query string counts too; a URL without one may be world-readable.
    write(&f.system, "db = \"postgres://bob@h/q?password=x\"\n", 0o644);
    assert!(Config::load_files(&f.system, None).is_err());
    write(&f.system, "db = \"postgres://bob@h/q\"\n", 0o644);
    assert!(Config::load_files(&f.system, None).is_ok());
}

#[test]
fn the_binary_reports_a_bad_config_in_one_line_and_changes_nothing() {
    let env = Env::new();
    env.ok("a", &["init"]);
    env.add("one");
    let before = env.fingerprint();
    let cfg = env.dir.path().join("config/caseload/config.toml");
    write(&cfg, "notify = \"bell\"\ncolour = \"blue\"\n", 0o644);
    let err = env.fails("a", &["add", "--title", "two"], 1);
    assert!(
        err.contains(&format!("{}:2: unknown key `colour`", cfg.display()))
            && err.contains("known keys: db"),
        "{err}"
    );
    assert_eq!(
        env.fingerprint(),
        before,
        "a refused command changes nothing"
    );
    // Hostile bytes in the file reach the terminal harmlessly.
    write(&cfg, "\"\u{1b}[2J\" = 1\n", 0o644);
    let err = env.fails("a", &["list"], 1);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    // Help, version, completions and man pages work whatever the config says.
    env.ok("a", &["--version"]);
    env.ok("a", &["list", "--help"]);
    // A good file is used.
    write(&cfg, "notify = \"desktop\"\n", 0o644);
    assert!(env.ok("a", &["list"]).contains("one"));
}

#[test]
fn the_example_config_shows_every_key_with_its_default() {
    let text = include_str!("../../assets/config.toml");
    let f = files();
    write(&f.system, text, 0o644);
    assert_eq!(
        Config::load_files(&f.system, None).unwrap(),
        Config::default(),
        "as shipped, the example changes nothing"
    );
    for (key, _) in caseload::config::KEYS {
        let prefix = format!("#{key} = ");
        let settings: Vec<&str> = text.lines().filter(|l| l.starts_with(&prefix)).collect();
        assert!(!settings.is_empty(), "the example lacks `{key}`");
        // Every commented setting, uncommented, is a valid value.
        for line in settings {
            write(&f.system, &line[1..], 0o644);
            let c = Config::load_files(&f.system, None).unwrap_or_else(|e| panic!("{line}: {e}"));
            if *key == "notify" {
                assert_eq!(c.notify, Notify::default(), "the example shows the default");
            }
        }
    }
}

/// Whoever may change a user's config file may point their `db` at a database of their
/// choosing: a config file (or its directory) that someone other than its owner and root
/// could change is refused with the fix, as a real non-root user sees it, and `doctor`
/// names it instead of showing only ✔.
#[test]
fn a_config_file_others_could_change_is_refused_and_doctor_says_so() {
    use std::os::unix::process::CommandExt;
    if crate::support::fault::skip_unless_root("a_config_file_others_could_change_is_refused") {
        return;
    }
    let users = crate::support::fault::Users::create("cfw", &[("me", true), ("oth", true)]);
    let (me, other) = (&users.names[0], &users.names[1]);
    let ((uid, gid), (other_uid, _)) = (users.ids(me), users.ids(other));
    let env = Env::new();
    std::fs::set_permissions(env.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for d in ["config/caseload", "data", "state", "cache", "mine"] {
        let d = env.dir.path().join(d);
        std::fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::chown(&d, Some(uid), Some(gid)).unwrap();
    }
    let dir = env.dir.path().join("config/caseload");
    std::os::unix::fs::chown(env.dir.path().join("config"), Some(uid), Some(gid)).unwrap();
    let cfg = dir.join("config.toml");
    let db = env.dir.path().join("mine/q.db");
    let run = |args: &[&str]| {
        env.command(me, args)
            .env_remove("CASELOAD_DB")
            .uid(uid)
            .gid(gid)
            .output()
            .unwrap()
    };
    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        run(&["--db", db.to_str().unwrap(), "init"])
            .status
            .success(),
        "init"
    );
    let put = |mode: u32, owner: u32| {
        write(&cfg, &format!("db = \"{}\"\n", db.display()), mode);
        std::os::unix::fs::chown(&cfg, Some(owner), Some(gid)).unwrap();
    };
    // Their own file, 0644 in their own 0755 directory: used.
    put(0o644, uid);
    let out = run(&["list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = run(&["doctor"]);
    let text = String::from_utf8_lossy(&doc.stdout).into_owned();
    let line = |text: &str| {
        text.lines()
            .find(|l| l.contains(" config: "))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line(&text).starts_with("✔ config: "), "{text}");

    type Case<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str);
    let cases: [Case; 4] = [
        (
            "writable by everyone (mode 0666)",
            Box::new(|| put(0o666, uid)),
            "chmod o-w",
        ),
        (
            // The group has another member: not a group of the user's own.
            "writable by group cfw",
            Box::new(|| put(0o664, uid)),
            "chmod g-w",
        ),
        (
            "belongs to cfwoth",
            Box::new(|| put(0o644, other_uid)),
            "sudo chown root",
        ),
        (
            "its directory",
            Box::new(|| {
                put(0o644, uid);
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            }),
            "chmod o-w",
        ),
    ];
    for (why, make, fix) in &cases {
        make();
        let out = run(&["list"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{why}: {err}");
        assert!(
            err.contains(&cfg.display().to_string()) && err.contains(why) && err.contains(fix),
            "{why}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        // doctor runs, says which file and how to fix it, and exits 1.
        let doc = run(&["doctor"]);
        let text = String::from_utf8_lossy(&doc.stdout).into_owned();
        let l = line(&text);
        assert!(
            l.starts_with("✘ config: ") && l.contains(why) && l.contains(&format!("fix: {fix}")),
            "{why}: {text}"
        );
        assert!(
            !text.contains(&format!("db set in {}", cfg.display())),
            "the file is not used: {text}"
        );
        assert_eq!(doc.status.code(), Some(1), "{text}");
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    put(0o600, uid);
    assert!(run(&["list"]).status.success());
}
