//! A world another connection holds busy, and a log that does not read whole: typed errors
//! that say what was busy and for how long, writes that go on once the lock is let go, and
//! appends refused on top of a log no load replays.

use std::time::Duration;

use loam_field::{CsgMode, EditOp, LogEntry};
use loam_store::{Store, StoreError, Writing};

use crate::bake_parts::{check_loads, new_world, run};
use crate::store::rusqlite_conn;

/// Every message of an error and its sources, as anyhow's `{:#}` prints it.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

fn dig(seq: u64) -> LogEntry {
    LogEntry::new(
        seq,
        seq,
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [seq as f64, 0.0, 0.0],
            radius: 1.5,
            material: 0,
            blend: 0.0,
        },
    )
}

/// Another connection with `BEGIN EXCLUSIVE` open (as an `sqlite3` shell) holds SQLite's
/// write lock: an append, a bake's part and its commit each fail with `Busy`, naming the
/// file, the write and how long it waited, and write nothing; once the lock is let go the
/// same writes succeed and the world loads as it is live.
#[test]
fn a_busy_file_says_what_was_busy_and_for_how_long() {
    let (_dir, path, mut field, mut history, mut store) = new_world(64 << 20);
    run(&mut store, &mut field, &mut history, 1, 20);
    let wait = Duration::from_millis(300);
    store.set_busy_wait(wait).unwrap();
    let mut bake = Store::prepare_bake(&store.baked(), &field, &history, 20, None);

    let lock = rusqlite_conn(&path);
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let busy = |e: StoreError, want: Writing| match e {
        StoreError::Busy {
            path: p,
            writing,
            waited,
        } => {
            assert_eq!((p.as_path(), writing), (path.as_path(), want));
            assert!(waited >= wait, "{waited:?}");
            let m = StoreError::Busy {
                path: p,
                writing,
                waited,
            }
            .to_string();
            assert!(
                m.contains("w.loam") && m.contains("was busy for") && m.contains(&want.to_string()),
                "{m}"
            );
        }
        e => panic!("not busy: {e}"),
    };
    let e = store.append(&dig(21)).unwrap_err();
    busy(e, Writing::Append);
    assert_eq!(Writing::Append.to_string(), "appending ops");
    assert_eq!(store.last_seq(), 20);
    busy(
        store.write_bake_part(&mut bake, 1).unwrap_err(),
        Writing::BakePart,
    );
    busy(
        store.commit_bake_untidied(&bake).unwrap_err(),
        Writing::BakeCommit,
    );
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);

    // The same bake, and the op, once the lock is let go.
    assert!(!store.write_bake_part(&mut bake, 1).unwrap());
    let (bricks, tidy) = store.commit_bake_untidied(&bake).unwrap();
    assert_eq!(bricks, bake.bricks());
    store.tidy_bake(&tidy);
    assert_eq!(store.info().unwrap().bake_seq, 20);
    run(&mut store, &mut field, &mut history, 21, 22);
    drop(store);
    check_loads(&path, &field, &history);
}

/// A logged op that does not decode (or whose checksum fails), or a gap in the log after
/// the bake: the next append of a store that has not loaded the world is refused with
/// `UnreadableLog`, which names the op as its source, and nothing is written. Its cause is
/// printed once in the whole chain.
#[test]
fn append_refuses_a_log_that_does_not_read_whole() {
    let (_dir, path, mut field, mut history, mut store) = new_world(64 << 20);
    run(&mut store, &mut field, &mut history, 1, 6);
    store.bake(&field, &history, 3).unwrap();
    drop(store);
    let ops = |path: &std::path::Path| -> Vec<i64> {
        let c = rusqlite_conn(path);
        let mut s = c.prepare("SELECT seq FROM ops ORDER BY seq").unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };

    // Op 5 damaged: refused, naming op 5.
    rusqlite_conn(&path)
        .execute("UPDATE ops SET op = x'81a176' WHERE seq = 5", [])
        .unwrap();
    let mut store = Store::open(&path).unwrap();
    let e = store.append(&dig(7)).unwrap_err();
    let StoreError::UnreadableLog { source, .. } = &e else {
        panic!("{e}");
    };
    assert!(
        matches!(**source, StoreError::CorruptOp { seq: 5, .. }),
        "{e}"
    );
    let whole = chain(&e);
    assert_eq!(whole.matches("checksum mismatch").count(), 1, "{whole}");
    assert!(whole.contains("op 5 is corrupt"), "{whole}");
    // Every kind of append is refused, and nothing is written.
    let e = store
        .append_batch(&[dig(7), dig(8)])
        .expect_err("a batch too");
    assert!(matches!(e, StoreError::UnreadableLog { .. }), "{e}");
    drop(store);
    assert_eq!(ops(&path), [1, 2, 3, 4, 5, 6]);

    // Op 5 gone (a gap after the bake): refused, naming the gap.
    rusqlite_conn(&path)
        .execute("DELETE FROM ops WHERE seq = 5", [])
        .unwrap();
    let mut store = Store::open(&path).unwrap();
    let e = store.append(&dig(7)).unwrap_err();
    let StoreError::UnreadableLog { source, .. } = &e else {
        panic!("{e}");
    };
    assert!(
        matches!(**source, StoreError::OutOfOrder { last: 4, got: 6 }),
        "{e}"
    );
    drop(store);
    assert_eq!(ops(&path), [1, 2, 3, 4, 6]);

    // A damaged op the bake covers is never read again: appends go on.
    rusqlite_conn(&path)
        .execute("UPDATE ops SET op = x'81a176' WHERE seq = 2", [])
        .unwrap();
    rusqlite_conn(&path)
        .execute("DELETE FROM ops WHERE seq = 6", [])
        .unwrap();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.last_seq(), 4);
    store.append(&dig(5)).unwrap();
    drop(store);
    assert_eq!(ops(&path), [1, 2, 3, 4, 5]);
}

/// A replay failure prints its cause once, in the source, not also in the message.
#[test]
fn a_cause_is_printed_once() {
    let e = StoreError::Replay {
        seq: 4,
        source: loam_field::EditError::RadiusNotPositive { radius: -1.0 },
    };
    let whole = chain(&e);
    let cause = loam_field::EditError::RadiusNotPositive { radius: -1.0 }.to_string();
    assert_eq!(whole, format!("op 4 fails on replay: {cause}"));
}
