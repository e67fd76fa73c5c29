//! Windows of a long list: any offset gives exactly the rows of the full list at that
//! position, whether read from the front or (past the middle) from the far end.

use caseload::domain::{Actor, NewItem};
use caseload::store::sqlite::OpenOptions;
use caseload::store::{ListFilter, SqliteStore, StateFilter, Store, TakeNext};

#[test]
fn every_window_matches_the_full_list() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let mut store = SqliteStore::open(&path, Actor::new("p", "p"), &OpenOptions::default()).unwrap();
    let items: Vec<NewItem> = (0..6000)
        .map(|i| NewItem {
            priority: (i * 7 % 5) as i64,
            queue: if i % 3 == 0 { "a".into() } else { "b".into() },
            ..NewItem::titled(&format!("item {i}"))
        })
        .collect();
    for chunk in items.chunks(2000) {
        store.add_batch(chunk).unwrap();
    }
    for _ in 0..300 {
        let it = store.take_next(&TakeNext::default()).unwrap();
        store.complete(it.id, it.lock_token, None).unwrap();
    }
    for (state, queue) in [
        (StateFilter::Open, None),
        (StateFilter::Open, Some("b".to_string())),
        (StateFilter::Done, None),
        (StateFilter::All, None),
    ] {
        let base = ListFilter {
            state,
            queue: queue.clone(),
            limit: 100_000,
            ..ListFilter::default()
        };
        let full: Vec<i64> = store.list(&base).unwrap().iter().map(|i| i.id).collect();
        assert_eq!(full.len() as u64, store.count(&base).unwrap());
        for offset in [0, 1, 1999, 2001, 2500, 2999, 3000, 3001, 3499, 3500, 4100, 5950, 5999, 6000, 7000] {
            for limit in [1, 40, 2000] {
                let got: Vec<i64> = store
                    .list(&ListFilter {
                        offset,
                        limit,
                        ..base.clone()
                    })
                    .unwrap()
                    .iter()
                    .map(|i| i.id)
                    .collect();
                let want: Vec<i64> = full.iter().skip(offset).take(limit).copied().collect();
                assert_eq!(got, want, "{state:?} {queue:?} offset {offset} limit {limit}");
            }
        }
    }
}
