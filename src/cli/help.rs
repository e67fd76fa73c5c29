//! Help beyond the argument docs: the examples that end every subcommand's `--help` (one
//! table, so each is written once and a test can parse them all), shell completions
//! (clap_complete, static) and manual pages (clap_mangen) generated from the same
//! command tree.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, ValueEnum};

pub use crate::cli::examples::EXAMPLES;
use crate::cli::{Cli, CliResult};

/// The shells `caseload completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// The full command tree: the derived arguments plus the examples after every help.
pub fn command() -> clap::Command {
    with_examples(Cli::command(), "")
}

/// Parses the process's arguments against [`command`].
pub fn parse() -> Result<Cli, clap::Error> {
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// A usage error as the one line the contract promises:
/// `<error> (see caseload COMMAND --help)`, naming the subcommand `args` reached.
pub fn usage_line(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // `caseload user`: clap's "error" is the group's whole help text.
        let path = subcommand_path(&command(), args.get(1..).unwrap_or(&[]));
        let mut cmd = command();
        for name in path.split_whitespace() {
            if let Some(c) = cmd.find_subcommand(name) {
                cmd = c.clone();
            }
        }
        let subs: Vec<String> = cmd
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .map(|c| c.get_name().to_string())
            .collect();
        return format!(
            "'caseload {path}' needs a subcommand: {} {}",
            subs.join(", "),
            see_help(args)
        );
    }
    let text = e.to_string();
    // clap's message ends at its first blank line (then come tips and the usage block).
    let first = text.split("\n\n").next().unwrap_or("");
    let message = first
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    format!("{message} {}", see_help(args))
}

/// `(see caseload COMMAND --help)` for the subcommand the process's `args` name.
pub fn see_help(args: &[std::ffi::OsString]) -> String {
    let path = subcommand_path(&command(), args.get(1..).unwrap_or(&[]));
    if path.is_empty() {
        "(see caseload --help)".to_string()
    } else {
        format!("(see caseload {path} --help)")
    }
}

/// The subcommands named in `args` (e.g. "queue set"), stepping over options' values.
fn subcommand_path(cmd: &clap::Command, args: &[std::ffi::OsString]) -> String {
    let mut cmd = cmd.clone();
    let mut path: Vec<String> = Vec::new();
    let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if !long.contains('=') && takes_value(&cmd, |x| x.get_long() == Some(long)) {
                it.next();
            }
            continue;
        }
        if let Some(short) = a.strip_prefix('-').and_then(|s| s.chars().next()) {
            if a.chars().count() == 2 && takes_value(&cmd, |x| x.get_short() == Some(short)) {
                it.next();
            }
            continue;
        }
        let Some(sub) = cmd.find_subcommand(&a).cloned() else {
            break;
        };
        path.push(sub.get_name().to_string());
        cmd = sub;
    }
    path.join(" ")
}

fn takes_value(cmd: &clap::Command, is: impl Fn(&clap::Arg) -> bool) -> bool {
    cmd.get_arguments()
        .find(|a| is(a))
        .is_some_and(|a| a.get_action().takes_values())
}

/// The examples of the subcommand at `path` ("" for caseload itself).
pub(crate) fn examples(path: &str) -> Option<&'static [(&'static str, &'static str)]> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| *e)
}

fn with_examples(cmd: clap::Command, path: &str) -> clap::Command {
    let mut cmd = cmd;
    if let Some(examples) = examples(path) {
        let mut text = match cmd.get_after_help() {
            Some(existing) => format!("{existing}\n\n"),
            None => String::new(),
        };
        text.push_str(&examples_text(examples));
        cmd = cmd.after_help(text);
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| with_examples(s, &sub_path));
    }
    cmd
}

/// "Examples:" and the lines: a short command with its comment beside it, a long one with
/// its comment above, so nothing wraps in an 100-column terminal.
fn examples_text(examples: &[(&str, &str)]) -> String {
    const BESIDE: usize = 50;
    let width = examples
        .iter()
        .map(|(c, _)| c.chars().count())
        .filter(|&n| n <= BESIDE)
        .max()
        .unwrap_or(0);
    let mut text = String::from("Examples:");
    for (command, what) in examples {
        if command.chars().count() > BESIDE {
            text.push_str(&format!("\n  # {what}\n  {command}"));
        } else {
            text.push_str(&format!("\n  {command:width$}  # {what}"));
        }
    }
    text
}

/// `caseload completions SHELL`: the script on `out`.
pub(crate) fn completions(shell: Shell, out: &mut dyn Write) -> CliResult {
    let mut cmd = command();
    let mut script = Vec::new();
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(generator, &mut cmd, "caseload", &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// `caseload man DIR`: caseload.1 and caseload-SUB.1 (caseload-queue-set.1, ...) in DIR.
pub(crate) fn man(dir: &Path, out: &mut dyn Write) -> CliResult {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    let mut written = 0;
    write_pages(&cmd, "", dir, &mut written)?;
    writeln!(
        out,
        "Wrote {written} manual pages to {}",
        crate::domain::sanitize::line(&dir.display().to_string())
    )?;
    Ok(())
}

fn write_pages(cmd: &clap::Command, path: &str, dir: &Path, written: &mut usize) -> CliResult {
    let man = clap_mangen::Man::new(cmd.clone())
        .manual("caseload manual")
        .source(format!("caseload {}", env!("CARGO_PKG_VERSION")));
    let file = dir.join(man.get_filename());
    let mut page = Vec::new();
    render_page(&man, cmd, path, &mut page)?;
    std::fs::write(&file, page).with_context(|| format!("{}: cannot write", file.display()))?;
    *written += 1;
    for sub in cmd.get_subcommands() {
        let sub_path = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        write_pages(sub, &sub_path, dir, written)?;
    }
    Ok(())
}

/// clap_mangen's sections, then EXAMPLES as a list rather than run-together text, and for
/// caseload(1) the environment, files and exit codes.
fn render_page(
    man: &clap_mangen::Man,
    cmd: &clap::Command,
    path: &str,
    w: &mut Vec<u8>,
) -> std::io::Result<()> {
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    if cmd.has_subcommands() {
        man.render_subcommands_section(w)?;
    }
    if path.is_empty() {
        w.extend_from_slice(ROOT_SECTIONS.as_bytes());
    }
    if let Some(examples) = examples(path) {
        w.extend_from_slice(b".SH EXAMPLES\n");
        for (command, what) in examples {
            w.extend_from_slice(
                format!(".TP\n\\fB{}\\fR\n{}\n", roff(command), roff(what)).as_bytes(),
            );
        }
    }
    let see_also = if path.is_empty() {
        let mut pages: Vec<String> = cmd
            .get_subcommands()
            .map(|s| format!("{}(1)", s.get_display_name().unwrap_or(s.get_name())))
            .collect();
        pages.sort();
        pages.join(", ")
    } else {
        "caseload(1)".to_string()
    };
    w.extend_from_slice(format!(".SH \"SEE ALSO\"\n.nh\n{}\n", roff(&see_also)).as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(w)?;
    }
    Ok(())
}

/// Escapes text for a roff line: backslashes, hyphens (so they stay minus signs in
/// commands) and a leading dot or quote (which would start a request).
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// ENVIRONMENT, FILES and EXIT STATUS of caseload(1).
const ROOT_SECTIONS: &str = r#".SH ENVIRONMENT
.TP
\fBCASELOAD_DB\fR
The database file or postgres:// URL, when \fB\-\-db\fR is not given.
.TP
\fBCASELOAD_USER\fR
The user to act as, when \fB\-\-user\fR is not given (default: the OS login name).
.TP
\fBCASELOAD_ALLOW_NETWORK_FS\fR
Set to 1 to open a database on a network filesystem anyway.
.TP
\fBCASELOAD_LOG\fR
The log level (e.g. debug) of caseload.log.
.TP
\fBNO_COLOR\fR
Any value gives a monochrome screen.
.TP
\fBTZ\fR
The zone of times in the TUI and in text output (e.g. Europe/Berlin); JSON stays UTC.
.TP
\fBPGPASSWORD\fR
The PostgreSQL password, as for libpq (or ~/.pgpass, mode 0600).
.SH FILES
.TP
\fI/etc/caseload/config.toml\fR
The system configuration: \fBdb = "PATH|URL"\fR (the database) and \fBnotify = "bell"\fR
(\fBbell\fR, \fBdesktop\fR, \fBboth\fR or \fBoff\fR) and \fBtheme = "auto"\fR
(\fBauto\fR, \fBdark\fR or \fBlight\fR: the TUI's colours). Both files are optional.
.TP
\fI~/.config/caseload/config.toml\fR
The user's configuration, same keys; a key set here wins over the system file. An unknown
key or a bad value is an error naming the file and line. A file whose \fBdb\fR holds a
password must be readable by its owner only (chmod 600).
.TP
\fI~/.local/share/caseload/caseload.db\fR
The database when none is configured (created on first use).
.TP
\fI~/.local/state/caseload/caseload.log\fR
Diagnostics; nothing is logged to the screen.
.SH "EXIT STATUS"
.TP
0
done
.TP
1
error: bad input, I/O, a corrupt, foreign or read\-only file
.TP
2
usage: unknown command or flag, missing argument
.TP
3
conflict: taken by someone else, lock lost, token mismatch, item already finished
.TP
4
nothing to claim (queue empty or paused, or your limit per user reached)
.TP
5
supervisor only
.TP
6
outcome unknown: the connection to the server was lost while a change was being
committed; it may have been applied (\fBcaseload list \-\-mine\fR shows what you hold)
"#;
