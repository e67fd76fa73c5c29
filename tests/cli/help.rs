//! Help that answers every question: every argument described, every subcommand's help
//! ending in examples that parse; completions and man pages from the same command tree.

use std::process::Command;

use crate::support::cli::{BIN, Env};
use caseload::cli::help::{self as cli_help, EXAMPLES};

/// Every subcommand below `cmd` (and `cmd` itself) with its path ("" for caseload), the
/// generated `help` subcommand left out.
fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
    out.push((path.to_string(), cmd.clone()));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let p = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        walk(sub, &p, out);
    }
}

fn tree() -> Vec<(String, clap::Command)> {
    let mut cmd = cli_help::command();
    cmd.build();
    let mut all = Vec::new();
    walk(&cmd, "", &mut all);
    all
}

#[test]
fn every_argument_of_every_subcommand_has_a_description() {
    let mut missing = Vec::new();
    let all = tree();
    assert!(all.len() > 25, "the walk reaches every subcommand");
    for (path, cmd) in &all {
        for arg in cmd.get_arguments() {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if help.trim().len() < 8 {
                missing.push(format!("caseload {path} {}", arg.get_id()));
            }
        }
        if cmd.get_about().is_none() {
            missing.push(format!("caseload {path} (the command itself)"));
        }
    }
    assert!(missing.is_empty(), "arguments without help: {missing:#?}");
}

#[test]
fn every_subcommand_help_ends_with_examples() {
    let mut without = Vec::new();
    for (path, mut cmd) in tree() {
        let help = cmd.render_help().to_string();
        let last_block = help
            .trim_end()
            .rsplit("\n\n")
            .next()
            .unwrap_or("")
            .to_string();
        let ok = last_block.starts_with("Examples:\n")
            && last_block
                .lines()
                .skip(1)
                .any(|l| l.trim_start().starts_with("caseload"));
        if !ok {
            without.push(format!("caseload {path}"));
        }
    }
    assert!(
        without.is_empty(),
        "help without examples at its end: {without:#?}"
    );
}

/// Splits an example into words as a shell would (quotes, no expansion), up to a `>`.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, ' ') => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, '>') => break,
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

#[test]
fn every_example_parses_and_belongs_to_a_real_subcommand() {
    let paths: Vec<String> = tree().into_iter().map(|(p, _)| p).collect();
    for (path, examples) in EXAMPLES {
        assert!(
            paths.iter().any(|p| p == path),
            "examples for `caseload {path}`, which does not exist"
        );
        for (line, what) in *examples {
            assert!(!what.is_empty());
            let argv = words(line);
            assert_eq!(argv[0], "caseload", "{line}");
            let res = cli_help::command().try_get_matches_from(&argv);
            match res {
                Ok(_) => {}
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {}
                Err(e) => panic!("example `{line}` does not parse: {e}"),
            }
            // An example of a subcommand runs that subcommand.
            let rest: Vec<&str> = argv[1..]
                .iter()
                .filter(|w| !w.starts_with('-') && !w.contains('/'))
                .map(String::as_str)
                .collect();
            assert!(
                path.is_empty() || rest.join(" ").starts_with(path),
                "example `{line}` is filed under `{path}`"
            );
        }
    }
}

#[test]
fn the_binary_explains_queue_set_and_claim() {
    let env = Env::new();
    let help = env.ok("a", &["queue", "set", "--help"]);
    // Flags and their text, whatever the column clap pads them to.
    let squeezed = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "<NAME> The queue's name",
        "--lock-seconds <SECONDS> Seconds after which a lock expires",
        "--warn-seconds <SECONDS> Seconds before expiry",
        "--paused <BOOL>",
        "--park-grace-seconds <SECONDS> Seconds a woken park waits for its owner",
        "--undo-seconds <SECONDS> Seconds after a complete",
        "caseload queue set helpdesk --lock-seconds 900",
    ] {
        assert!(
            squeezed.contains(needle),
            "{needle:?} missing from:\n{help}"
        );
    }
    assert!(help.contains("Examples:\n"), "{help}");
    let help = env.ok("a", &["claim", "--help"]);
    assert!(
        help.contains("Take from this queue only (default: every queue)"),
        "{help}"
    );
    assert!(help.contains("--json"), "{help}");
    // `help` as a subcommand works too, and the examples follow the exit codes.
    let help = env.ok("a", &["help"]);
    assert!(
        help.contains("Exit codes:") && help.contains("Examples:"),
        "{help}"
    );
}

#[test]
fn bash_completes_subcommands_and_flags_from_the_script() {
    let env = Env::new();
    let script = env.dir.path().join("caseload.bash");
    std::fs::write(&script, env.ok("a", &["completions", "bash"])).unwrap();
    let complete = |words: &str| -> String {
        let n = words.split(' ').count() - 1;
        let probe = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={n}; COMP_LINE='{words}'; \
             COMP_POINT=${{#COMP_LINE}}; _caseload caseload; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash")
            .args(["--norc", "-c", &probe])
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let subs = complete("caseload cl");
    assert!(subs.lines().any(|l| l == "claim"), "{subs}");
    let flags = complete("caseload queue set q --lock");
    assert!(flags.lines().any(|l| l == "--lock-seconds"), "{flags}");
    let shells = complete("caseload completions ");
    assert!(
        ["bash", "zsh", "fish"]
            .iter()
            .all(|s| shells.split_whitespace().any(|w| w == *s)),
        "{shells}"
    );
}

#[test]
fn zsh_and_fish_scripts_name_every_subcommand() {
    let env = Env::new();
    let zsh = env.ok("a", &["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef caseload"), "{}", &zsh[..80]);
    let fish = env.ok("a", &["completions", "fish"]);
    for sub in ["claim", "complete", "migrate-to", "completions"] {
        assert!(zsh.contains(&format!("'{sub}:")), "zsh lacks {sub}");
        assert!(fish.contains(&format!("-a \"{sub}\"")), "fish lacks {sub}");
    }
    // A shell caseload does not know is a usage error (exit 2), not a panic.
    let out = env.run("a", &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_writes_one_page_per_subcommand() {
    let env = Env::new();
    let dir = env.dir.path().join("man/man1");
    let said = env.ok("a", &["man", dir.to_str().unwrap()]);
    let pages: Vec<String> = tree()
        .iter()
        .map(|(p, _)| {
            if p.is_empty() {
                "caseload.1".to_string()
            } else {
                format!("caseload-{}.1", p.replace(' ', "-"))
            }
        })
        .collect();
    assert!(
        said.contains(&format!("Wrote {} manual pages", pages.len())),
        "{said}"
    );
    for page in &pages {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH "), "{page} has a title");
        assert!(
            text.contains(".SH EXAMPLES\n.TP\n\\fBcaseload"),
            "{page} has examples"
        );
    }
    let root = std::fs::read_to_string(dir.join("caseload.1")).unwrap();
    for section in [
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH \"EXIT STATUS\"",
        "caseload\\-queue(1)",
    ] {
        assert!(root.contains(section), "caseload.1 lacks {section}");
    }
    // man(1) renders the pages without complaint where it is installed.
    if Command::new("man").arg("--version").output().is_ok() {
        for page in ["caseload.1", "caseload-queue-set.1"] {
            let out = Command::new("man")
                .args(["--warnings", "-l"])
                .arg(dir.join(page))
                .env("MANWIDTH", "100")
                .env("MANPAGER", "cat")
                .env("PAGER", "cat")
                .output()
                .unwrap();
            let shown = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stderr.is_empty(),
                "{page}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(shown.contains("EXAMPLES"), "{shown}");
        }
    } else {
        crate::support::skip::skip("man is not installed (the pages were checked as text only)");
    }
    // A directory that cannot be made is one clear line, exit 1.
    let blocker = env.dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let err = env.fails("a", &["man", blocker.join("sub").to_str().unwrap()], 1);
    assert!(err.contains("cannot create"), "{err}");
    let _ = BIN;
}
