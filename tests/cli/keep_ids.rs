//! `import --keep-ids`: an export read back with the ids it had, on both formats and both
//! backends; a taken id, a file without ids and ids out of order refuse the whole import
//! (database unchanged); re-runs add nothing; items added afterwards never collide.

use crate::support::backend::Adds;
use crate::support::backend::{Backend, PgBackend, SqliteBackend};
use crate::support::cli::Env;
use caseload::domain::NewItem;
use caseload::import::{self, Format, ImportError, Progress, Summary};
use caseload::store::{ListFilter, StateFilter, Store};
use serde_json::Value;

fn items(env: &Env) -> Vec<Value> {
    let v: Value =
        serde_json::from_str(&env.ok("x", &["list", "--state", "all", "--limit", "0", "--json"]))
            .unwrap();
    v.as_array().unwrap().clone()
}

fn write(env: &Env, name: &str, text: &str) -> String {
    let path = env.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// (id, title, request_id) of every item, by id.
fn ids(env: &Env) -> Vec<(i64, String, Value)> {
    let mut v: Vec<_> = items(env)
        .iter()
        .map(|v| {
            (
                v["id"].as_i64().unwrap(),
                v["title"].as_str().unwrap().to_string(),
                v["request_id"].clone(),
            )
        })
        .collect();
    v.sort_by_key(|t| t.0);
    v
}

/// A source with gaps in its open ids: finished items between them, one with its own
/// request id.
fn source(src: &Env) {
    for i in 1..=9 {
        let title = format!("task {i}");
        let mut args = vec!["add", "--title", &title];
        let rid = format!("rid-{i}");
        if i == 4 {
            args.extend(["--request-id", &rid]);
        }
        src.ok("p", &args);
    }
    for _ in 0..3 {
        let (id, _) = src.claim("alice", &[]);
        src.ok("alice", &["complete", &id.to_string()]);
    }
}

/// Exports `src` as CSV into `dsts[0]` and as JSON Lines into `dsts[1]` with --keep-ids.
fn keep_round_trip(src: &Env, dsts: [&Env; 2]) {
    source(src);
    let want: Vec<_> = ids(src)
        .into_iter()
        .filter(|(id, _, _)| {
            items(src)
                .iter()
                .any(|v| v["id"] == *id && v["state"] == "open")
        })
        .map(|(id, t, r)| (id, t, if r.is_null() { None } else { Some(r) }))
        .collect();
    assert_eq!(want.len(), 6);
    assert_ne!(
        want[0].0, 1,
        "the first items were finished: the ids have gaps"
    );
    for (format, dst) in ["csv", "jsonl"].into_iter().zip(dsts) {
        let path = write(
            src,
            &format!("out.{format}"),
            &src.ok("x", &["export", "--format", format]),
        );
        let out = dst.ok("p", &["import", &path, "--keep-ids"]);
        assert!(
            out.contains("Imported 6 new item(s)") && out.contains("left out 3 finished"),
            "{format}: {out}"
        );
        let got: Vec<_> = ids(dst)
            .into_iter()
            .map(|(id, t, r)| {
                let own = r.as_str().is_some_and(|r| !r.starts_with("import:"));
                (id, t, own.then_some(r))
            })
            .collect();
        assert_eq!(got, want, "{format}: every item keeps its id");
        // History: created by whoever imported it, nothing else.
        let show = dst.show(want[0].0);
        let kinds: Vec<&str> = (show["history"].as_array().unwrap().iter())
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["created"], "{format}: {show}");
        assert_eq!(show["created_by"], "p", "{format}");
        // Again: everything is there already, at its id.
        let again = dst.ok("p", &["import", &path, "--keep-ids"]);
        assert!(
            again.contains("Imported 0 new item(s)") && again.contains("6 already present"),
            "{format}: {again}"
        );
        // Items added later take ids above the kept ones.
        let max = want.last().unwrap().0;
        let new: i64 = dst
            .ok("p", &["add", "--title", "later"])
            .trim()
            .parse()
            .unwrap();
        assert_eq!(new, max + 1, "{format}");
        let (taken, _) = dst.claim("bob", &[]);
        assert_eq!(
            taken, want[0].0,
            "{format}: the kept items are work as usual"
        );
    }
}

#[test]
fn an_export_keeps_its_ids_on_sqlite() {
    keep_round_trip(&Env::init("p"), [&Env::init("p"), &Env::init("p")]);
}

#[test]
fn an_export_keeps_its_ids_on_postgres() {
    let (Some(a), Some(b), Some(c)) = (
        PgBackend::from_env(),
        PgBackend::from_env(),
        PgBackend::from_env(),
    ) else {
        return;
    };
    let on = |pg: &PgBackend| {
        let env = Env {
            db: pg.url.clone().into(),
            ..Env::new()
        };
        env.ok("p", &["init"]);
        env
    };
    keep_round_trip(&on(&a), [&on(&b), &on(&c)]);
}

#[test]
fn a_taken_id_refuses_the_whole_import_naming_its_line() {
    let env = Env::init("p");
    env.add("already here");
    env.add("and here");
    let file = write(&env, "f.csv", "id,title\n7,free\n2,clash\n9,free too\n");
    let before = env.fingerprint();
    let err = env.fails("p", &["import", &file, "--keep-ids"], 1);
    assert!(
        err.contains("line 3") && err.contains("id 2") && err.contains("nothing imported"),
        "{err}"
    );
    // Ids out of order are refused before they are looked up.
    let file = write(&env, "g.csv", "id,title\n7,a\n5,b\n");
    let err = env.fails("p", &["import", &file, "--keep-ids"], 1);
    assert!(
        err.contains("line 3") && err.contains("increasing"),
        "{err}"
    );
    // A request id the database knows under another id.
    env.ok("p", &["add", "--title", "keyed", "--request-id", "k-1"]);
    let before_keyed = env.fingerprint();
    let file = write(
        &env,
        "h.jsonl",
        "{\"id\":40,\"title\":\"keyed\",\"request_id\":\"k-1\"}\n",
    );
    let err = env.fails("p", &["import", &file, "--keep-ids"], 1);
    assert!(err.contains("line 1") && err.contains("#3"), "{err}");
    assert_eq!(before_keyed, env.fingerprint());
    assert_ne!(before, env.fingerprint());
}

#[test]
fn keep_ids_needs_ids_and_a_supervisor() {
    let env = Env::init("p");
    let before = env.fingerprint();
    let csv = write(&env, "no-ids.csv", "title\nwithout an id\n");
    let err = env.fails("p", &["import", &csv, "--keep-ids"], 1);
    assert!(
        err.contains("line 1") && err.contains("no 'id' column"),
        "{err}"
    );
    let jsonl = write(
        &env,
        "some.jsonl",
        "{\"id\":5,\"title\":\"a\"}\n{\"title\":\"b\"}\n",
    );
    let err = env.fails("p", &["import", &jsonl, "--keep-ids"], 1);
    assert!(err.contains("line 2 has no id"), "{err}");
    let ok = write(&env, "ok.csv", "id,title\n5,fine\n");
    let err = env.fails("staffer", &["import", &ok, "--keep-ids"], 5);
    assert!(err.contains("supervisor only"), "{err}");
    assert_eq!(before, env.fingerprint());
    // Without --keep-ids the same file's ids are ignored.
    assert!(
        env.ok("staffer", &["import", &ok])
            .contains("Imported 1 new")
    );
    assert_eq!(ids(&env)[0].0, 1);
}

fn keep(store: &mut dyn Store, path: &std::path::Path, progress: &mut dyn Progress) -> Summary {
    let opts = import::Options {
        format: Format::from_path(path),
        default_queue: "default",
        create_queues: true,
        keep_ids: true,
        define_fields: false,
        skip_duplicates: false,
    };
    import::import(store, path, &opts, progress).unwrap_or_else(|e| panic!("import: {e:?}"))
}

#[test]
fn kept_ids_below_the_search_index_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteBackend::new().open("p", 0);
    let first = dir.path().join("first.csv");
    std::fs::write(&first, "id,title\n5,alpha one\n50,alpha two\n").unwrap();
    keep(&mut *store, &first, &mut ());
    while store.index_search(1000).unwrap() > 0 {}
    // Id 20 is free, below what the index holds already.
    let second = dir.path().join("second.csv");
    std::fs::write(&second, "id,title\n20,zebra crossing\n").unwrap();
    assert_eq!(keep(&mut *store, &second, &mut ()).created, 1);
    let found = store
        .list(&ListFilter {
            state: StateFilter::All,
            text: Some("zebra".into()),
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.iter().map(|i| i.id).collect::<Vec<_>>(), [20]);
}

/// Appends to the file once the first batch is written, stopping the import there.
struct StopAfterFirstBatch {
    path: std::path::PathBuf,
    done: bool,
}

impl Progress for StopAfterFirstBatch {
    fn checking(&mut self, _: u64, _: u64, _: u64) {}
    fn writing(&mut self, rows: u64, _: u64) {
        if rows > 0 && !self.done {
            self.done = true;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&self.path)
                .unwrap();
            std::io::Write::write_all(&mut f, b"99999,late\n").unwrap();
        }
    }
}

#[test]
fn an_import_cut_short_and_run_again_keeps_every_id_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteBackend::new().open("p", 0);
    let path = dir.path().join("rows.csv");
    let mut text = String::from("id,title\n");
    for i in 0..1200 {
        text.push_str(&format!("{},same title\n", 10 + 3 * i));
    }
    std::fs::write(&path, &text).unwrap();
    let opts = import::Options {
        format: Format::Csv,
        default_queue: "default",
        create_queues: true,
        keep_ids: true,
        define_fields: false,
        skip_duplicates: false,
    };
    let mut stop = StopAfterFirstBatch {
        path: path.clone(),
        done: false,
    };
    let err = import::import(&mut *store, &path, &opts, &mut stop).unwrap_err();
    let ImportError::Changed { written, .. } = err else {
        panic!("{err:?}")
    };
    let partial = store.count(&ListFilter::default()).unwrap();
    assert_eq!(partial, written);
    assert!(written > 1 && written < 1200, "{written}");
    // The same bytes again: the rows written are recognised, the rest added.
    std::fs::write(&path, &text).unwrap();
    let sum = keep(&mut *store, &path, &mut ());
    assert_eq!((sum.created, sum.same_file), (1200 - written, written));
    assert!(
        sum.longest_write > std::time::Duration::ZERO,
        "the writes are timed"
    );
    let all = store
        .list(&ListFilter {
            state: StateFilter::All,
            limit: 2000,
            ..Default::default()
        })
        .unwrap();
    let mut got: Vec<i64> = all.iter().map(|i| i.id).collect();
    got.sort();
    assert_eq!(got, (0..1200).map(|i| 10 + 3 * i).collect::<Vec<_>>());
    // One creation time, the first run's, for the whole file: taken in the order of ids.
    let times: std::collections::BTreeSet<i64> = all.iter().map(|i| i.created_at).collect();
    assert_eq!(times.len(), 1, "{times:?}");
    assert_eq!(
        store.add(&NewItem::titled("next")).unwrap().id,
        10 + 3 * 1199 + 1
    );
}

/// Adds an item through another connection once the first pass has read the whole file.
struct AddWhileChecking {
    other: crate::support::backend::BoxStore,
    done: bool,
}

impl Progress for AddWhileChecking {
    fn checking(&mut self, bytes: u64, total: u64, _: u64) {
        if bytes == total && !self.done {
            self.done = true;
            self.other.add(&NewItem::titled("meanwhile")).unwrap();
        }
    }
    fn writing(&mut self, _: u64, _: u64) {}
}

#[test]
fn an_item_added_into_the_kept_range_during_the_check_refuses_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SqliteBackend::new();
    let mut store = backend.open("p", 0);
    let path = dir.path().join("rows.csv");
    std::fs::write(&path, "id,title\n1,one\n2,two\n3,three\n").unwrap();
    let opts = import::Options {
        format: Format::Csv,
        default_queue: "default",
        create_queues: true,
        keep_ids: true,
        define_fields: false,
        skip_duplicates: false,
    };
    let mut meanwhile = AddWhileChecking {
        other: backend.open("q", 0),
        done: false,
    };
    let err = import::import(&mut *store, &path, &opts, &mut meanwhile).unwrap_err();
    let ImportError::Store { error, written: 0 } = err else {
        panic!("{err:?}")
    };
    assert!(
        error.to_string().contains("while the file was checked"),
        "{error}"
    );
    // Only the item added meanwhile is there; run again, the taken id is named.
    let all = store.list(&ListFilter::default()).unwrap();
    assert_eq!(
        all.iter().map(|i| i.title.as_str()).collect::<Vec<_>>(),
        ["meanwhile"]
    );
    let Err(ImportError::Bad { errors, .. }) = import::import(&mut *store, &path, &opts, &mut ())
    else {
        panic!("refused")
    };
    assert_eq!(errors[0].line, 2, "{errors:?}");
}
