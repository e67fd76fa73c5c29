//! A newcomer's first screen, as an ordinary login (not root) in a real terminal (tmux):
//! `caseload demo` opens the Queue view on the demo's work, and quitting says where the
//! demo is and how to open it again. Needs root to create the login (CI runs as root).

use std::os::unix::fs::PermissionsExt;

use crate::support;
use crate::support::cli::BIN;
use crate::support::fault::Users;
use crate::support::tmux::Tmux;

#[test]
fn the_demo_opens_for_an_ordinary_login_and_says_how_to_come_back() {
    if support::fault::skip_unless_root("the_demo_opens_for_an_ordinary_login") {
        return;
    }
    let users = Users::create("fht", &[("new", false)]);
    let me = users.names[0].clone();
    let (uid, gid) = users.ids(&me);
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(home.path(), Some(uid), Some(gid)).unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let Some(t) = Tmux::start("firsthour") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    let h = home.path().display();
    t.send(&[
        &format!(
            "clear; runuser -u {me} -- env -i PATH=/usr/bin:/bin TERM=$TERM HOME={h} \
             XDG_DATA_HOME={h}/data XDG_STATE_HOME={h}/state {BIN} demo"
        ),
        "Enter",
    ]);
    let screen = t.wait_for("the demo's queue", |s| {
        s.contains("1 Queue") && s.contains("0 held") && s.contains("free")
    });
    let header = screen.lines().find(|l| l.contains("1 Queue")).unwrap();
    assert!(
        header.contains(&format!("{me} (supervisor) · 0 held")),
        "{screen}"
    );
    assert!(
        screen.contains("EXP bob"),
        "the demo's people at work: {screen}"
    );
    t.send(&["q"]);
    let path = home.path().join("data/caseload/caseload-demo.db");
    t.wait_for("the way back", |s| {
        s.contains("READY$") && s.contains("again")
    });
    // Joined as written (-J): a line the pane wrapped is one line again.
    let joined = String::from_utf8_lossy(&t.cmd(&["capture-pane", "-p", "-J", "-t", ":0"]).stdout)
        .into_owned();
    let said = joined
        .lines()
        .find(|l| l.contains("The demo database"))
        .unwrap_or_default();
    assert_eq!(
        said.trim_end(),
        format!(
            "The demo database is {p}. Open it again with: caseload --db {p}",
            p = path.display()
        ),
        "{joined}"
    );
}
