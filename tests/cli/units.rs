//! The systemd examples the package ships (`assets/systemd/`, installed by the .deb under
//! /usr/share/doc/caseload/examples/) do what the README says: the README shows the hook
//! unit as shipped; the hook unit's own command line runs its hook once per completed item
//! and keeps its checkpoint in the unit's state directory; the metrics unit's own command
//! writes, whole, a file node_exporter's textfile collector and promtool read.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::cli::{BIN, Env};
use crate::support::skip::skip;

fn shipped(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/systemd")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A unit's `Key=` value, its continuation lines (ending in `\`) joined by one space.
fn value(unit: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    let mut lines = unit.lines().map(str::trim);
    let first = lines
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {key}= in\n{unit}"));
    let mut out = first.to_string();
    while out.ends_with('\\') {
        out.pop();
        out.push(' ');
        out.push_str(lines.next().unwrap_or_default());
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The words of a command line as systemd splits it (the examples quote with `'` only).
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for ch in line.chars() {
        match ch {
            '\'' => (quoted, any) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// `PATH` with the tested binary's directory first, as `caseload` is on a real host's.
fn path_with_caseload() -> String {
    let dir = PathBuf::from(BIN).parent().unwrap().to_path_buf();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn the_readme_shows_the_hook_unit_as_shipped_and_the_deb_installs_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let at = readme
        .find("/usr/share/doc/caseload/examples/caseload-hook.service")
        .expect("the README names the shipped hook unit");
    let start = at
        + readme[at..]
            .find("```ini\n")
            .expect("an ini block after it")
        + 7;
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let unit = shipped("caseload-hook.service");
    let lines: Vec<&str> = unit.lines().map(str::trim).collect();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            lines.contains(&line.trim()),
            "the README's line `{line}` is not in assets/systemd/caseload-hook.service"
        );
    }
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        cargo.contains(r#"["assets/systemd/*", "usr/share/doc/caseload/examples/", "644"]"#),
        "the .deb installs the examples"
    );
}

#[test]
fn the_hook_units_command_runs_its_hook_per_completed_item() {
    let env = Env::init("boss");
    let unit = shipped("caseload-hook.service");
    let mut args = words(&value(&unit, "ExecStart"));
    assert_eq!(args.remove(0), "/usr/bin/caseload", "{args:?}");
    // The checkpoint lives in the unit's StateDirectory (systemd makes /var/lib/NAME).
    let state = format!("/var/lib/{}/", value(&unit, "StateDirectory"));
    let dir = env.dir.path();
    let hook = dir.join("mail-customer");
    std::fs::write(&hook, "#!/bin/sh\ncat >> mailed\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut replaced = 0;
    for a in &mut args {
        if let Some(rest) = a.strip_prefix(&state) {
            *a = dir.join(rest).display().to_string();
            replaced += 1;
        } else if a == "/usr/local/bin/mail-customer" {
            *a = hook.display().to_string();
            replaced += 1;
        }
    }
    assert_eq!(
        replaced, 2,
        "a checkpoint in {state} and the hook: {args:?}"
    );
    assert!(value(&unit, "Environment").starts_with("CASELOAD_DB="));
    let id = env.add("refund").to_string();
    env.claim("boss", &["--id", &id]);
    env.ok("boss", &["complete", &id]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = env.command("boss", &args).spawn().unwrap();
    let mailed = dir.join("mailed");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&mailed)
        .unwrap_or_default()
        .contains("\"kind\":\"completed\"")
    {
        assert!(
            Instant::now() < deadline,
            "the hook never ran: {:?}",
            child.try_wait()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The checkpoint follows the hook's success.
    let checkpoint = dir.join("checkpoint");
    while std::fs::read_to_string(&checkpoint)
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "no checkpoint written");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let lines = std::fs::read_to_string(&mailed).unwrap();
    assert_eq!(lines.lines().count(), 1, "one completion, one run: {lines}");
}

#[test]
fn the_metrics_units_command_writes_a_file_the_collector_reads() {
    let env = Env::init("boss");
    env.add("open one");
    let unit = shipped("caseload-metrics.service");
    let timer = shipped("caseload-metrics.timer");
    assert_eq!(value(&timer, "OnUnitActiveSec"), "15s");
    assert!(value(&unit, "Environment").starts_with("CASELOAD_DB="));
    let args = words(&value(&unit, "ExecStart"));
    assert_eq!(args.len(), 3, "{args:?}");
    assert_eq!((args[0].as_str(), args[1].as_str()), ("/bin/sh", "-c"));
    let collector = env.dir.path().join("node_exporter");
    std::fs::create_dir(&collector).unwrap();
    let script = args[2].replace("/var/lib/node_exporter", &collector.display().to_string());
    assert_ne!(
        script, args[2],
        "the unit writes into the collector's directory"
    );
    let out = Command::new(&args[0])
        .args([&args[1], &script])
        .env("PATH", path_with_caseload())
        .env("HOME", env.dir.path())
        .env("CASELOAD_DB", &env.db)
        .env("CASELOAD_USER", "boss")
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let names: Vec<String> = std::fs::read_dir(&collector)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["caseload.prom"], "written whole, then renamed");
    let text = std::fs::read_to_string(collector.join("caseload.prom")).unwrap();
    assert!(
        text.contains("caseload_open_items{queue=\"default\"} 1\n"),
        "{text}"
    );
    if Command::new("promtool").arg("--version").output().is_ok() {
        let lint = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(collector.join("caseload.prom")).unwrap())
            .output()
            .unwrap();
        assert!(lint.status.success(), "promtool: {lint:?}");
    } else {
        skip("promtool is not installed (Debian package prometheus)");
    }
}
