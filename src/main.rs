//! The `caseload` binary: parse arguments, dispatch, map errors to an exit code.

use std::io::Write;
use std::process::ExitCode;

use caseload::cli;
use caseload::domain::sanitize;
use caseload::store::exit;

fn main() -> ExitCode {
    // A panic must never reach a user as a backtrace: one line, exit 1.
    std::panic::set_hook(Box::new(|info| {
        tracing::error!(%info, "panic");
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unexpected error".into());
        eprintln!(
            "caseload: internal error: {} (please report this)",
            sanitize::line(&msg)
        );
    }));
    let cli = match caseload::cli::help::parse() {
        Ok(c) => c,
        Err(e) => {
            return match e.kind() {
                // `caseload user` without its subcommand is a usage error (exit 2), though
                // clap answers it with the help text.
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    ExitCode::from(exit::OK as u8)
                }
                _ => {
                    // One line, as every other error: `caseload: <error> (see … --help)`.
                    let args: Vec<_> = std::env::args_os().collect();
                    let line = cli::help::usage_line(&e, &args);
                    eprintln!("caseload: {}", sanitize::line(&line));
                    ExitCode::from(exit::USAGE as u8)
                }
            };
        }
    };
    caseload::logging::init();
    // Times a person reads are local (`TZ` honoured); JSON and exports stay UTC.
    caseload::domain::time::set_display_zone(caseload::domain::time::Zone::Local);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cli::run(cli, &mut out)));
    let _ = out.flush();
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(f)) => {
            // A closed pipe (`caseload list | head`) is not an error.
            if f.error.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            tracing::warn!(code = f.code, error = %format!("{:#}", f.error), "command failed");
            let mut line = format!("{:#}", f.error);
            if f.code == exit::USAGE && !line.contains("--help") {
                let args: Vec<_> = std::env::args_os().collect();
                line = format!("{line} {}", cli::help::see_help(&args));
            }
            eprintln!("caseload: {}", sanitize::line(&line));
            ExitCode::from(f.code as u8)
        }
        Err(_) => ExitCode::from(exit::ERROR as u8),
    }
}
