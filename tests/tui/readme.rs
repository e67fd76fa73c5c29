//! The README's screenshots are the real demo: `caseload demo`'s data (written by the same
//! function, on a fixed clock so that every age and countdown is the same on each run),
//! drawn by the real loop on a TestBackend as its creator sees it at first, then after
//! `n`. A changed screen fails here; `CASELOAD_UPDATE_README=1 cargo test --test tui
//! readme::` writes the new screens into README.md.

use std::path::Path;
use std::sync::Arc;

use caseload::domain::Actor;
use caseload::store::sqlite::{OpenOptions, SqliteStore};

use crate::support::tui::{Clock, key, screen, start};

/// Tuesday 2026-11-24, 10:30 UTC: two weeks of history behind it, a working morning.
const NOW: i64 = 1_795_516_200_000;

/// The README's text between the line holding `marker` and the end of the fenced block
/// that follows it: (start, end) byte offsets of the block's contents.
fn block_after(readme: &str, marker: &str) -> (usize, usize) {
    let at = readme.find(marker).expect("the README's marker line");
    let start = at
        + readme[at..]
            .find("```\n")
            .expect("a block after the marker")
        + 4;
    let end = start + readme[start..].find("```\n").expect("the block's end");
    (start, end)
}

#[test]
fn the_readme_screenshots_are_the_real_demo() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    let you = Actor::new("you", "you");
    caseload::demo::create_with_clock(&path, &you, false, Arc::new(|| NOW)).unwrap();
    let clock = Clock::at(NOW);
    let c = clock.clone();
    let store = SqliteStore::open_with_clock(
        &path,
        you,
        &OpenOptions::default(),
        Box::new(move || c.now()),
    )
    .unwrap();
    let mut s = start(store, &clock, 120, 26, false);
    let queue = screen(&s.state);
    s.step(key('n'));
    let taken = screen(&s.state);
    let shot = |text: &str| -> String {
        let lines: Vec<&str> = text.lines().collect();
        let end = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        lines[..end].iter().map(|l| format!("{l}\n")).collect()
    };

    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let mut readme = std::fs::read_to_string(&file).unwrap();
    let mut stale = Vec::new();
    for (marker, now) in [
        ("The Queue view of `caseload demo`", shot(&queue)),
        ("After `n` (take next)", shot(&taken)),
    ] {
        let (start, end) = block_after(&readme, marker);
        if readme[start..end] != now {
            stale.push(format!(
                "--- README.md, after {marker:?}\n{}\n--- the demo now\n{now}",
                &readme[start..end]
            ));
            readme.replace_range(start..end, &now);
        }
    }
    if std::env::var_os("CASELOAD_UPDATE_README").is_some() {
        std::fs::write(&file, readme).unwrap();
        return;
    }
    assert!(
        stale.is_empty(),
        "README.md's screenshots are not what the demo shows; run \
         `CASELOAD_UPDATE_README=1 cargo test --test tui readme::` to update them\n{}",
        stale.join("\n")
    );
}
