//! Tests that cannot run here say so. libtest keeps a passing test's own output to itself,
//! so a note printed by the test is never seen: instead each skip is counted by its
//! reason, and the test binary ends with one line saying how many tests (or parts of
//! tests) did not run, and why. With `CASELOAD_TEST_REQUIRE_ALL=1` (CI sets it) a skip is
//! a failure: everything must run there.

use std::collections::BTreeMap;
use std::sync::{Mutex, Once};

/// Why the PostgreSQL cases skip.
pub const NO_POSTGRES: &str = "CASELOAD_TEST_PG is not set (a PostgreSQL URL runs them)";
/// Why the tests in a real terminal skip.
pub const NO_TMUX: &str = "tmux is not installed";
/// Why the tests that mount filesystems or create OS users skip.
pub const NOT_ROOT: &str = "they mount filesystems or create users, which needs root";

/// The environment variable that turns a skip into a failure.
pub const REQUIRE_ALL: &str = "CASELOAD_TEST_REQUIRE_ALL";

/// The tests skipped so far, by reason.
static SKIPPED: Mutex<BTreeMap<String, Vec<String>>> = Mutex::new(BTreeMap::new());
static AT_EXIT: Once = Once::new();

/// Records that the running test (or a part of it) does not run here because of `why`;
/// the caller then returns. Panics instead when `CASELOAD_TEST_REQUIRE_ALL` is set.
#[track_caller]
pub fn skip(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let required = std::env::var(REQUIRE_ALL).is_ok_and(|v| !v.is_empty() && v != "0");
    if required {
        panic!("{test} cannot run here: {why} ({REQUIRE_ALL} is set: nothing may be skipped)");
    }
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function that touches only this module's
        // statics and stderr.
        unsafe { libc::atexit(report) };
    });
    let mut skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    skipped.entry(why.to_string()).or_default().push(test);
}

/// The binary's last line: how many did not run, and why.
extern "C" fn report() {
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    let total: usize = skipped.values().map(Vec::len).sum();
    if total == 0 {
        return;
    }
    let why: Vec<String> = skipped
        .iter()
        .map(|(why, tests)| format!("{} because {why}", tests.len()))
        .collect();
    eprintln!(
        "\nnote: {total} test(s) or part(s) of tests did NOT run here: {}. With {REQUIRE_ALL}=1 \
         a skip fails instead.",
        why.join("; ")
    );
}
