//! Ready-made texts and reasons that count (issue 28 §2), on both backends: supervisors
//! keep a queue's texts (audited); release and skip take an optional reason; a chosen
//! text's code is kept in the event of a release, skip, fail or complete, and a code the
//! queue has no such text for is refused with nothing written. "boss" opens first and is
//! the supervisor; "alice" is staff.

use serde_json::json;

use crate::support::backend::{Backend, add, assert_code, setup};
use caseload::domain::figures::Period;
use caseload::domain::texts::{Purpose, Said};
use caseload::domain::{AuditKind, EventKind, ItemState, QueueUpdate};
use caseload::store::{Applied, ReportQuery, Store, TakeNext, exit};

conformance!(
    supervisors_add_change_and_delete_texts_audited,
    staff_read_texts_but_may_not_keep_them,
    texts_go_with_a_renamed_queue,
    release_and_skip_keep_their_reason_and_code,
    fail_and_complete_keep_the_code_of_a_chosen_text,
    a_code_the_queue_has_not_is_refused_and_nothing_written,
    a_retried_release_with_a_reason_is_already_done,
    reasons_are_counted_by_code_per_queue_and_person,
);

fn codes(s: &mut dyn Store, q: &str) -> Vec<String> {
    s.texts(Some(q))
        .unwrap()
        .into_iter()
        .map(|t| t.code)
        .collect()
}

/// The last event's kind and detail.
fn last(s: &mut dyn Store, id: i64) -> (EventKind, serde_json::Value) {
    let h = s.history(id).unwrap();
    let e = h.last().unwrap();
    (e.kind, e.detail.clone())
}

fn supervisors_add_change_and_delete_texts_audited(b: &dyn Backend) {
    let mut boss = setup(b);
    let t = boss
        .add_text("default", Purpose::Skip, " Needs a Spanish speaker ", None)
        .unwrap();
    assert_eq!(t.code, "needs-a-spanish-speaker", "made from the text");
    assert_eq!(t.text, "Needs a Spanish speaker");
    boss.add_text(
        "default",
        Purpose::Fail,
        "No answer after 3 calls",
        Some("no-answer"),
    )
    .unwrap();
    // A made code that is taken gets a number; the same text twice is refused.
    boss.add_text("default", Purpose::Result, "no answer", None)
        .unwrap();
    let e = assert_code(
        boss.add_text(
            "default",
            Purpose::Fail,
            "No answer after 3 calls",
            Some("x"),
        ),
        exit::ERROR,
    );
    assert!(e.to_string().contains("as 'no-answer'"), "{e}");
    assert_eq!(
        codes(&mut *boss, "default"),
        ["needs-a-spanish-speaker", "no-answer", "no-answer-2"]
    );
    // A code the queue has gets the new text; the same again changes nothing.
    boss.add_text(
        "default",
        Purpose::Fail,
        "No answer after 4 calls",
        Some("no-answer"),
    )
    .unwrap();
    let e = assert_code(
        boss.add_text(
            "default",
            Purpose::Fail,
            "No answer after 4 calls",
            Some("no-answer"),
        ),
        exit::ERROR,
    );
    assert!(e.to_string().contains("nothing changed"), "{e}");
    // A code names one text: another purpose's code is refused, not moved over.
    let e = assert_code(
        boss.add_text("default", Purpose::Park, "Call back", Some("no-answer")),
        exit::ERROR,
    );
    assert!(
        e.to_string()
            .contains("has code 'no-answer' for its fail text"),
        "{e}"
    );
    // Deleted by code or by text (case ignored); an unknown one names the codes there are.
    boss.delete_text("default", "no-answer-2").unwrap();
    boss.delete_text("default", "needs a spanish SPEAKER")
        .unwrap();
    let e = assert_code(boss.delete_text("default", "zzz"), exit::ERROR);
    assert!(e.to_string().contains("its codes: no-answer"), "{e}");
    assert_eq!(codes(&mut *boss, "default"), ["no-answer"]);
    // Bad input is refused before anything is written.
    for (text, code) in [("", None), ("two\nlines", None), ("ok", Some("Bad Code"))] {
        assert_code(
            boss.add_text("default", Purpose::Fail, text, code),
            exit::ERROR,
        );
    }
    assert_code(
        boss.add_text("nosuch", Purpose::Fail, "x", None),
        exit::ERROR,
    );
    // Each change one audit record, old → new.
    let audit: Vec<_> = boss
        .audit(None, 0)
        .unwrap()
        .into_iter()
        .filter(|a| a.kind == AuditKind::Text)
        .collect();
    assert_eq!(audit.len(), 6, "{audit:?}");
    assert_eq!(audit[0].subject, "default.needs-a-spanish-speaker");
    assert!(audit[0].old.is_null());
    assert_eq!(
        audit[0].new,
        json!({"for": "skip", "text": "Needs a Spanish speaker"})
    );
    assert_eq!(audit[3].old["text"], "No answer after 3 calls");
    assert_eq!(audit[3].new["text"], "No answer after 4 calls");
    assert_eq!(audit[5].new, json!({"deleted": true}));
    assert_eq!(audit[5].old["for"], "skip");
    assert_eq!(audit[5].actor, "boss");
}

fn staff_read_texts_but_may_not_keep_them(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.add_text("default", Purpose::Fail, "No answer", Some("no-answer"))
        .unwrap();
    let mut alice = b.open("alice", 0);
    assert_code(
        alice.add_text("default", Purpose::Fail, "Wrong number", None),
        exit::SUPERVISOR_ONLY,
    );
    assert_code(
        alice.delete_text("default", "no-answer"),
        exit::SUPERVISOR_ONLY,
    );
    assert_eq!(
        codes(&mut *alice, "default"),
        ["no-answer"],
        "staff read them"
    );
}

fn texts_go_with_a_renamed_queue(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue("intake", &QueueUpdate::default(), true)
        .unwrap();
    boss.add_text("intake", Purpose::Skip, "Needs Spanish", Some("spanish"))
        .unwrap();
    boss.rename_queue("intake", "suppliers").unwrap();
    assert_eq!(codes(&mut *boss, "suppliers"), ["spanish"]);
    assert!(codes(&mut *boss, "intake").is_empty());
    boss.delete_queue("suppliers").unwrap();
    assert!(boss.texts(None).unwrap().is_empty(), "gone with its queue");
}

fn release_and_skip_keep_their_reason_and_code(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.add_text(
        "default",
        Purpose::Skip,
        "Needs a Spanish speaker",
        Some("spanish"),
    )
    .unwrap();
    let id = add(&mut *boss, "call Mei");
    let mut alice = b.open("alice", 0);
    // No reason: the event is as it always was.
    let t = alice.take(id).unwrap().lock_token;
    alice.release(id, t).unwrap();
    assert_eq!(
        last(&mut *alice, id),
        (EventKind::Released, json!({"token": t}))
    );
    // A free reason (trimmed); a blank one is no reason.
    let t = alice.take(id).unwrap().lock_token;
    let said = Said::text(Some("  waiting for documents "));
    alice.release_said(id, t, said).unwrap();
    assert_eq!(
        last(&mut *alice, id),
        (
            EventKind::Released,
            json!({"token": t, "reason": "waiting for documents"})
        )
    );
    // A code alone: the ready-made text is the reason.
    let t = alice.take(id).unwrap().lock_token;
    alice
        .skip_said(id, t, Said::NOTHING.coded(Some("spanish")))
        .unwrap();
    assert_eq!(
        last(&mut *alice, id),
        (
            EventKind::Skipped,
            json!({"token": t, "reason": "Needs a Spanish speaker", "code": "spanish"})
        )
    );
    // Chosen, then edited: the edited text with the code.
    let t = alice.take(id).unwrap().lock_token;
    let said = Said::text(Some("Needs a Spanish speaker (Chile)")).coded(Some("spanish"));
    alice.skip_said(id, t, said).unwrap();
    let (_, d) = last(&mut *alice, id);
    assert_eq!(d["reason"], "Needs a Spanish speaker (Chile)");
    assert_eq!(d["code"], "spanish");
    let item = alice.item(id).unwrap();
    assert!(item.lock_user.is_none() && item.state == ItemState::Open);
}

fn fail_and_complete_keep_the_code_of_a_chosen_text(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.add_text(
        "default",
        Purpose::Fail,
        "No answer after 3 calls",
        Some("no-answer"),
    )
    .unwrap();
    boss.add_text("default", Purpose::Result, "Password reset", Some("reset"))
        .unwrap();
    let one = add(&mut *boss, "one");
    let two = add(&mut *boss, "two");
    let three = add(&mut *boss, "three");
    let mut alice = b.open("alice", 0);
    let t = alice.take(one).unwrap().lock_token;
    alice
        .fail_said(one, t, Said::NOTHING.coded(Some("no-answer")))
        .unwrap();
    let item = alice.item(one).unwrap();
    assert_eq!(item.error.as_deref(), Some("No answer after 3 calls"));
    assert_eq!(last(&mut *alice, one).1["code"], "no-answer");
    let t = alice.take(two).unwrap().lock_token;
    let said = Said::text(Some("Password reset, told by phone")).coded(Some("reset"));
    alice.complete_said(two, t, said, None).unwrap();
    let item = alice.item(two).unwrap();
    assert_eq!(
        item.result.as_deref(),
        Some("Password reset, told by phone")
    );
    assert_eq!(
        last(&mut *alice, two),
        (
            EventKind::Completed,
            json!({"token": t, "result": "Password reset, told by phone", "code": "reset"})
        )
    );
    // Complete-and-next keeps it too.
    let t = alice.take(three).unwrap().lock_token;
    let next = TakeNext::default();
    let done = alice
        .complete_and_next_said(three, t, Said::NOTHING.coded(Some("reset")), None, &next)
        .unwrap();
    assert_eq!(done.finished, Applied::Now);
    let h = alice.history(three).unwrap();
    let c = h.iter().rfind(|e| e.kind == EventKind::Completed).unwrap();
    assert_eq!(c.detail["result"], "Password reset");
    assert_eq!(c.detail["code"], "reset");
}

fn a_code_the_queue_has_not_is_refused_and_nothing_written(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.add_text("default", Purpose::Skip, "Needs Spanish", Some("spanish"))
        .unwrap();
    let id = add(&mut *boss, "one");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    let before = alice.history(id).unwrap().len();
    // A skip text's code is not a fail text's; an unknown code names the ones there are.
    let e = assert_code(
        alice.fail_said(id, t, Said::NOTHING.coded(Some("spanish"))),
        exit::ERROR,
    );
    assert!(
        e.to_string().contains("no fail text with code 'spanish'"),
        "{e}"
    );
    let e = assert_code(
        alice.skip_said(id, t, Said::NOTHING.coded(Some("spansh"))),
        exit::ERROR,
    );
    assert!(e.to_string().contains("its codes for that: spanish"), "{e}");
    // A fail needs a reason, typed or ready-made.
    assert_code(alice.fail_said(id, t, Said::NOTHING), exit::ERROR);
    assert_eq!(alice.history(id).unwrap().len(), before, "nothing written");
    let item = alice.item(id).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("alice"), "still held");
    // A non-holder with a good code is told the lock is not theirs.
    let mut bob = b.open("bob", 0);
    assert_code(
        bob.skip_said(id, t, Said::NOTHING.coded(Some("spanish"))),
        exit::CONFLICT,
    );
}

fn a_retried_release_with_a_reason_is_already_done(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.add_text(
        "default",
        Purpose::Release,
        "Waiting for documents",
        Some("docs"),
    )
    .unwrap();
    let id = add(&mut *boss, "one");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    let said = Said::NOTHING.coded(Some("docs"));
    assert_eq!(alice.release_said(id, t, said).unwrap(), Applied::Now);
    assert_eq!(alice.release_said(id, t, said).unwrap(), Applied::Already);
    let released = alice
        .history(id)
        .unwrap()
        .iter()
        .filter(|e| e.kind == EventKind::Released)
        .count();
    assert_eq!(released, 1);
}

fn reasons_are_counted_by_code_per_queue_and_person(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue("other", &QueueUpdate::default(), true)
        .unwrap();
    boss.add_text("default", Purpose::Skip, "Needs Spanish", Some("spanish"))
        .unwrap();
    boss.add_text("default", Purpose::Fail, "No answer", Some("no-answer"))
        .unwrap();
    let ids: Vec<i64> = (0..6)
        .map(|i| add(&mut *boss, &format!("item {i}")))
        .collect();
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    let spanish = Said::NOTHING.coded(Some("spanish"));
    let t = alice.take(ids[0]).unwrap().lock_token;
    alice.skip_said(ids[0], t, spanish).unwrap();
    let t = bob.take(ids[0]).unwrap().lock_token;
    bob.skip_said(ids[0], t, spanish).unwrap();
    let t = alice.take(ids[1]).unwrap().lock_token;
    alice.skip_said(ids[1], t, spanish).unwrap();
    let t = alice.take(ids[2]).unwrap().lock_token;
    alice
        .skip_said(ids[2], t, Said::text(Some("too long")))
        .unwrap();
    let t = alice.take(ids[3]).unwrap().lock_token;
    alice.release(ids[3], t).unwrap();
    let t = bob.take(ids[4]).unwrap().lock_token;
    bob.fail_said(ids[4], t, Said::NOTHING.coded(Some("no-answer")))
        .unwrap();
    let t = bob.take(ids[5]).unwrap().lock_token;
    bob.complete(ids[5], t, Some("fine")).unwrap();
    let now = boss.now().unwrap();
    let q = |queue: Option<&str>| ReportQuery {
        period: Period {
            since: now - 3_600_000,
            until: now + 60_000,
        },
        queue: queue.map(str::to_string),
        rows_only: false,
    };
    let got: Vec<(String, String, String, u64)> = boss
        .reasons(&q(None))
        .unwrap()
        .into_iter()
        .map(|r| {
            assert_eq!(r.queue, "default");
            (r.kind, r.reason, r.person, r.count)
        })
        .collect();
    let want = [
        ("failed", "no-answer", "bob", 1),
        ("released", "(none)", "alice", 1),
        ("skipped", "spanish", "alice", 2),
        ("skipped", "other", "alice", 1),
        ("skipped", "spanish", "bob", 1),
    ];
    let want: Vec<(String, String, String, u64)> = want
        .iter()
        .map(|(k, r, p, n)| (k.to_string(), r.to_string(), p.to_string(), *n))
        .collect();
    assert_eq!(got, want);
    assert!(boss.reasons(&q(Some("other"))).unwrap().is_empty());
    // An empty period is refused.
    let mut empty = q(None);
    empty.period.until = empty.period.since;
    assert_code(boss.reasons(&empty), exit::ERROR);
}
