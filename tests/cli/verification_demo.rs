//! README's "Verification work" example, run on a fresh demo: the record bob holds in the
//! verification queue breaks its fields' rules, Complete says which, `set` and `tick`
//! correct it, and then it completes. A change to the demo that moves the example fails
//! here (and README.md says what to change).

use crate::support::cli::Env;

#[test]
fn the_readmes_verification_example_runs_on_the_demo() {
    let env = Env::new();
    env.ok("you", &["demo"]);
    let readme = include_str!("../../README.md");
    assert!(readme.contains("caseload --user bob complete 313"));
    let mine = env.ok("bob", &["list", "--mine", "--queue", "verification"]);
    assert!(
        mine.contains("#313") && mine.contains("Mei Brandt"),
        "the README's example record moved: {mine}"
    );
    let refused = env.fails("bob", &["complete", "313"], 1);
    for part in [
        "email: \"m.brandt@vandelay,example\" is not an e-mail address",
        "phone: \"0171 2345678\" is not a phone number with its country code",
        "checks: not ticked",
    ] {
        assert!(refused.contains(part), "{refused}");
    }
    let set = env.ok(
        "bob",
        &[
            "set",
            "313",
            "email=m.brandt@vandelay.example",
            "phone=+49 171 2345678",
            "subject=Mei Brandt",
        ],
    );
    for line in [
        "#313 email: m.brandt@vandelay,example → m.brandt@vandelay.example",
        "#313 phone: 0171 2345678 → +491712345678 (typed +49 171 2345678)",
        "#313 subject: Mei Brnadt → Mei Brandt",
    ] {
        assert!(set.contains(line), "{set}");
        assert!(readme.contains(line), "README.md shows: {line}");
    }
    env.ok(
        "bob",
        &[
            "tick",
            "313",
            "checks",
            "Record matches the source document",
        ],
    );
    env.ok(
        "bob",
        &["tick", "313", "checks", "Names spelt as in the registry"],
    );
    assert!(
        env.ok("bob", &["complete", "313"])
            .contains("Completed #313")
    );
    let shown = env.ok("you", &["show", "313"]);
    assert_eq!(shown.matches("field_changed").count(), 5, "{shown}");
}
