//! Format 4's bakes: only the strokes that changed are written, rows may be written ahead of
//! the commit (and are not read until it), and every bake still loads as the live world.

use std::path::{Path, PathBuf};

use loam_field::{CsgMode, EditOp, Field, History, LogEntry};
use loam_store::{Store, StoreError};

use crate::store::{GEN, base};

/// A small dig or build, stroke `i`, along a line of the terrain.
fn op(field: &Field, i: u64) -> EditOp {
    let x = (i % 25) as f64 * 1.7;
    EditOp::Sphere {
        mode: if i.is_multiple_of(3) {
            CsgMode::Union
        } else {
            CsgMode::Subtract
        },
        center: [x, field.generator().surface_height(x, 2.0), 2.0],
        radius: 1.2,
        material: (i % 7) as u8,
        blend: 0.0,
    }
}

/// Applies and logs ops `from ..= to` (stroke = sequence number; every seventh op undoes the
/// stroke five before it, an old one).
pub fn run(store: &mut Store, field: &mut Field, history: &mut History, from: u64, to: u64) {
    for seq in from..=to {
        let op = if seq.is_multiple_of(7) && history.can_undo(seq - 5) == Some(true) {
            EditOp::Undo { stroke: seq - 5 }
        } else {
            op(field, seq)
        };
        history.apply(field, seq, &op).unwrap();
        store.append(&LogEntry::new(seq, seq, op)).unwrap();
    }
}

/// A new world file in a temporary folder (kept while the folder lives), its live field and
/// a history of `budget` bytes.
pub fn new_world(budget: usize) -> (tempfile::TempDir, PathBuf, Field, History, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let field = base();
    let store = Store::create(&path, GEN, field.settings(), None).unwrap();
    (dir, path, field, History::new(budget), store)
}

fn count(path: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

pub fn check_loads(path: &Path, field: &Field, history: &History) {
    let loaded = Store::open(path).unwrap().load(base()).unwrap();
    assert_eq!(loaded.field.hash(), field.hash());
    assert_eq!(&loaded.history, history);
}

/// A second bake writes the new strokes and the old one an undo changed, not the strokes the
/// file already holds; strokes the budget forgot are deleted; the world and its history load
/// as they are live, and undo works after the reload.
#[test]
fn a_bake_writes_only_new_and_changed_strokes() {
    // Room for about 20 of these strokes (~500 bytes each: the values from before a stroke
    // and the values it left): the oldest are forgotten as the world goes on.
    let (_dir, path, mut field, mut history, mut store) = new_world(10_000);
    run(&mut store, &mut field, &mut history, 1, 30);
    store.bake(&field, &history, 30).unwrap();

    // Five new strokes and an undo of stroke 30 (op 35).
    run(&mut store, &mut field, &mut history, 31, 36);
    assert_eq!(history.can_undo(30), Some(false));
    let incremental = Store::prepare_bake(&store.baked(), &field, &history, 36, None);
    let whole = Store::prepare_bake(&Default::default(), &field, &history, 36, None);
    assert_eq!(incremental.strokes(), 6);
    assert_eq!(whole.strokes(), history.len());
    assert!(incremental.stroke_bytes() * 2 < whole.stroke_bytes());
    store.commit_bake(incremental).unwrap();
    drop(store);
    let first = history.header().first.unwrap();
    assert!(first > 1, "the budget forgot the oldest strokes");
    // No row holds only forgotten strokes, and the rows of the first bake that still hold kept
    // strokes stay (they were not written again).
    assert_eq!(
        count(
            &path,
            &format!("SELECT COUNT(*) FROM strokes WHERE last < {first}")
        ),
        0
    );
    // Each brick once, at its newest bake.
    assert_eq!(
        count(
            &path,
            "SELECT COUNT(*) FROM (SELECT 1 FROM bricks GROUP BY z, y, x HAVING COUNT(*) > 1)"
        ),
        0
    );
    check_loads(&path, &field, &history);

    // Undo after the reload equals undo live.
    let mut store = Store::open(&path).unwrap();
    let mut loaded = store.load(base()).unwrap();
    let target = history.undo_target().unwrap();
    let undo = EditOp::Undo { stroke: target };
    history.apply(&mut field, 37, &undo).unwrap();
    loaded.history.apply(&mut loaded.field, 37, &undo).unwrap();
    assert_eq!(loaded.field.hash(), field.hash());
    // The loaded store knows its strokes: a bake after the undo writes that stroke alone.
    store.append(&LogEntry::new(37, 37, undo)).unwrap();
    let next = Store::prepare_bake(&store.baked(), &loaded.field, &loaded.history, 37, None);
    assert_eq!(next.strokes(), 1);
    store.commit_bake(next).unwrap();
    drop(store);
    check_loads(&path, &field, &history);
}

/// A bake's tidying may wait (the server's writer does it after the next group of ops):
/// until it runs, the replaced brick versions and the forgotten strokes stay; run after the
/// next bake's rows are written ahead, and again after that bake's commit, it deletes none
/// of the newer rows; the world loads as it is live.
#[test]
fn a_bake_tidied_later_deletes_only_what_it_replaced() {
    let (_dir, path, mut field, mut history, mut store) = new_world(5_000);
    run(&mut store, &mut field, &mut history, 1, 30);
    store.bake(&field, &history, 30).unwrap();
    run(&mut store, &mut field, &mut history, 31, 80);
    let p = Store::prepare_bake(&store.baked(), &field, &history, 80, None);
    let (bricks80, tidy80) = store.commit_bake_untidied(&p).unwrap();
    assert!(bricks80 > 0);
    let first = history.header().first.unwrap();
    let stale_bricks = "SELECT COUNT(*) FROM (SELECT 1 FROM bricks WHERE seq <= 80 \
                        GROUP BY z, y, x HAVING COUNT(*) > 1)";
    let forgotten = format!("SELECT COUNT(*) FROM strokes WHERE last < {first}");
    assert!(count(&path, stale_bricks) > 0, "older versions wait");
    assert!(count(&path, &forgotten) > 0, "forgotten strokes wait");

    // The next bake's rows, all written ahead; then the first bake's tidying.
    run(&mut store, &mut field, &mut history, 81, 90);
    let mut next = Store::prepare_bake(&store.baked(), &field, &history, 90, None);
    while !store.write_bake_part(&mut next, 1).unwrap() {}
    // The next bake's rows as written ahead: (bricks, stroke rows).
    let newer = || {
        (
            count(&path, "SELECT COUNT(*) FROM bricks WHERE seq = 90"),
            count(&path, "SELECT COUNT(*) FROM strokes WHERE seq = 90"),
        )
    };
    let ahead = newer();
    assert_eq!(ahead.0, next.bricks() as i64);
    assert!(ahead.1 > 0);
    store.tidy_bake(&tidy80);
    assert_eq!(count(&path, stale_bricks), 0);
    assert_eq!(count(&path, &forgotten), 0);
    assert_eq!(newer(), ahead);

    // An older tidy after a newer commit deletes nothing the newer bake wrote.
    let (_, tidy90) = store.commit_bake_untidied(&next).unwrap();
    store.tidy_bake(&tidy80);
    assert_eq!(newer(), ahead);
    store.tidy_bake(&tidy90);
    drop(store);
    assert_eq!(
        count(
            &path,
            "SELECT COUNT(*) FROM (SELECT 1 FROM bricks GROUP BY z, y, x HAVING COUNT(*) > 1)"
        ),
        0
    );
    check_loads(&path, &field, &history);
}

/// Rows written ahead of a commit are not read: a store dropped before the commit (a crash)
/// loads as the last bake plus the log, and the next open deletes them. Written ahead in
/// full and committed, the bake loads as the live world.
#[test]
fn rows_written_ahead_are_read_only_after_the_commit() {
    let (_dir, path, mut field, mut history, mut store) = new_world(History::DEFAULT_BUDGET);
    run(&mut store, &mut field, &mut history, 1, 20);
    store.bake(&field, &history, 20).unwrap();
    run(&mut store, &mut field, &mut history, 21, 45);

    let mut p = Store::prepare_bake(&store.baked(), &field, &history, 45, None);
    assert!(
        !store.write_bake_part(&mut p, 1).unwrap(),
        "one row per part"
    );
    // A crash here: the rows are in the file, the bake is not.
    drop(p);
    drop(store);
    assert_eq!(
        count(&path, "SELECT COUNT(*) FROM bricks WHERE seq = 45"),
        1
    );
    check_loads(&path, &field, &history);
    assert_eq!(
        count(&path, "SELECT COUNT(*) FROM bricks WHERE seq > 20"),
        0
    );
    assert_eq!(
        count(&path, "SELECT COUNT(*) FROM strokes WHERE seq > 20"),
        0
    );
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.info().unwrap().bake_seq, 20);

    // Loaded, so the store knows what its file holds.
    store.load(base()).unwrap();
    let mut p = Store::prepare_bake(&store.baked(), &field, &history, 45, None);
    let mut parts = 1;
    while !store.write_bake_part(&mut p, 1).unwrap() {
        parts += 1;
    }
    assert!(parts > 2, "{parts} parts");
    assert_eq!(store.info().unwrap().bake_seq, 20, "not committed yet");
    store.commit_bake(p).unwrap();
    assert_eq!(store.info().unwrap().bake_seq, 45);
    drop(store);
    check_loads(&path, &field, &history);
}

/// Older versions of baked bricks left behind (a crash between a bake's commit and its
/// tidying) are deleted by the next writable open, which finds them in the `bricks_seq`
/// index; a file made before that index (or with it dropped) gets it on that open.
#[test]
fn older_brick_versions_left_behind_are_deleted_on_open() {
    let (_dir, path, mut field, mut history, mut store) = new_world(History::DEFAULT_BUDGET);
    run(&mut store, &mut field, &mut history, 1, 20);
    store.bake(&field, &history, 20).unwrap();
    drop(store);
    let bricks = count(&path, "SELECT COUNT(*) FROM bricks");
    assert!(bricks > 1);
    {
        // Each brick once more at an older sequence number (what a bake replaced and did
        // not get to delete), and the index gone.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "INSERT INTO bricks (x, y, z, seq, data) SELECT x, y, z, seq - 1, data FROM bricks;
             DROP INDEX bricks_seq;",
        )
        .unwrap();
    }
    assert_eq!(count(&path, "SELECT COUNT(*) FROM bricks"), 2 * bricks);
    check_loads(&path, &field, &history);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM bricks"), bricks);
    assert_eq!(
        count(&path, "SELECT COUNT(*) FROM bricks WHERE seq <> 20"),
        0,
        "the newest version of each brick is kept"
    );
    let index = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'bricks_seq'";
    assert_eq!(count(&path, index), 1);
    // Read-only opens neither need nor make it.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("DROP INDEX bricks_seq;").unwrap();
    }
    let info = Store::open_read_only(&path).unwrap().info().unwrap();
    assert_eq!(info.bake_seq, 20);
    assert_eq!(count(&path, index), 0);
}

/// A bake prepared before another was committed, or one behind the file's bake, is refused
/// and changes nothing.
#[test]
fn a_stale_or_older_bake_is_refused() {
    let (_dir, path, mut field, mut history, mut store) = new_world(History::DEFAULT_BUDGET);
    run(&mut store, &mut field, &mut history, 1, 15);
    let baked = store.baked();
    let first = Store::prepare_bake(&baked, &field.clone(), &history.clone(), 15, None);
    run(&mut store, &mut field, &mut history, 16, 20);
    let mut second = Store::prepare_bake(&baked, &field, &history, 20, None);
    store.commit_bake(first).unwrap();
    assert!(matches!(
        store.write_bake_part(&mut second, 1 << 20),
        Err(StoreError::OutOfOrder { last: 15, got: 20 })
    ));
    assert!(matches!(
        store.commit_bake(second),
        Err(StoreError::OutOfOrder { last: 15, got: 20 })
    ));
    assert!(matches!(
        store.bake(&field, &history, 10),
        Err(StoreError::OutOfOrder { last: 15, got: 10 })
    ));
    assert_eq!(store.info().unwrap().bake_seq, 15);
    drop(store);
    check_loads(&path, &field, &history);
}

/// A history that is not the old one grown (here a fresh one with other strokes) replaces
/// every stroke row: none of the old strokes comes back.
#[test]
fn a_replaced_history_leaves_no_old_strokes() {
    let (_dir, path, mut field, mut history, mut store) = new_world(History::DEFAULT_BUDGET);
    run(&mut store, &mut field, &mut history, 1, 20);
    store.bake(&field, &history, 20).unwrap();
    // A history of its own: two strokes with ids among the old ones.
    let mut other = History::default();
    let mut scratch = base();
    let (a, b) = (op(&scratch, 3), op(&scratch, 4));
    other.apply(&mut scratch, 7, &a).unwrap();
    other.apply(&mut scratch, 9, &b).unwrap();
    run(&mut store, &mut field, &mut history, 21, 22);
    store.bake(&field, &other, 22).unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load(base()).unwrap();
    assert_eq!(loaded.history, other);
    assert_eq!(loaded.field.hash(), field.hash());
}

/// A history that starts below the file's oldest kept stroke, with a gap where a stroke the
/// file's history forgot still sits in a kept row (the row also holds live strokes): every
/// row is written anew, so the forgotten stroke does not come back.
#[test]
fn a_history_reaching_below_the_files_strokes_is_written_anew() {
    let (_dir, path, mut field, mut history, mut store) = new_world(5_000);
    run(&mut store, &mut field, &mut history, 1, 30);
    store.bake(&field, &history, 30).unwrap();
    let first30 = history.header().first.unwrap();
    run(&mut store, &mut field, &mut history, 31, 36);
    store.bake(&field, &history, 36).unwrap();
    let first36 = history.header().first.unwrap();
    assert!(first36 > first30 + 1, "{first30} {first36}");
    // Stroke first30 and every stroke the file's history keeps, but not first30 + 1.
    let mut other = History::default();
    let mut scratch = base();
    let kept: Vec<u64> = history.shared_strokes().map(|s| s.id()).collect();
    for i in std::iter::once(first30).chain(kept) {
        let o = op(&scratch, i);
        other.apply(&mut scratch, i, &o).unwrap();
    }
    run(&mut store, &mut field, &mut history, 37, 37);
    store.bake(&field, &other, 37).unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load(base()).unwrap();
    assert_eq!(loaded.history, other);
}

/// Undo and redo of one old stroke with a bake after each: each bake writes the stroke again,
/// and the replaced versions (unread) do not pile up in the file: once they outnumber the
/// live strokes, the rows are written anew.
#[test]
fn replaced_stroke_versions_do_not_pile_up() {
    let (_dir, path, mut field, mut history, mut store) = new_world(History::DEFAULT_BUDGET);
    run(&mut store, &mut field, &mut history, 1, 20);
    store.bake(&field, &history, 20).unwrap();
    drop(store);
    let live_rows = count(&path, "SELECT COUNT(*) FROM strokes");
    let mut store = Store::open(&path).unwrap();
    let w = store.load(base()).unwrap();
    let (mut field, mut history) = (w.field, w.history);
    let live = history.len() as i64;
    let mut most = 0;
    for seq in 21..=60 {
        let op = if seq % 2 == 1 {
            EditOp::Undo { stroke: 1 }
        } else {
            EditOp::Redo { stroke: 1 }
        };
        history.apply(&mut field, seq, &op).unwrap();
        store.append(&LogEntry::new(seq, seq, op)).unwrap();
        store.bake(&field, &history, seq).unwrap();
        if seq % 10 == 0 {
            drop(store);
            most = most.max(count(&path, "SELECT COUNT(*) FROM strokes"));
            store = Store::open(&path).unwrap();
            let w = store.load(base()).unwrap();
            assert_eq!(w.history, history);
            (field, history) = (w.field, w.history);
        }
    }
    // One row per rewrite of stroke 1, at most one per live stroke before all are rewritten.
    assert!(
        most <= live_rows + live + 1,
        "{most} rows for {live} strokes"
    );
    drop(store);
    check_loads(&path, &field, &history);
}

/// SplitMix64.
fn mix(z: &mut u64) -> u64 {
    *z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut x = *z;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Random sessions: ops (new strokes, continued strokes, undo and redo of old strokes),
/// bakes (whole, in parts, parts abandoned, at the same sequence), compaction, reopening with
/// and without a load, small budgets: every load equals the live world and history.
#[test]
fn random_sessions_load_as_live() {
    for seed in 0..6u64 {
        let mut z = seed * 7919 + 1;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.loam");
        let mut field = base();
        let mut history = History::new(3_000 + seed as usize * 1_000);
        let mut store = Some(Store::create(&path, GEN, field.settings(), None).unwrap());
        // A world never baked loads with the default budget: bake this one in first.
        store.as_mut().unwrap().bake(&field, &history, 0).unwrap();
        let (mut seq, mut stroke) = (0u64, 0u64);
        let mut abandoned = None;
        for step in 0..250 {
            let s = store.as_mut().unwrap();
            let r = mix(&mut z) % 100;
            if r < 55 {
                seq += 1;
                let (st, op) = if r < 15 && stroke > 0 {
                    (stroke, op(&field, seq))
                } else if r < 30 {
                    // Undo or redo an older kept stroke.
                    let ids: Vec<u64> = history.shared_strokes().map(|s| s.id()).collect();
                    let id = ids.get(mix(&mut z) as usize % ids.len().max(1)).copied();
                    match id.and_then(|i| history.can_undo(i).map(|u| (i, u))) {
                        Some((i, true)) => (0, EditOp::Undo { stroke: i }),
                        Some((i, false)) => (0, EditOp::Redo { stroke: i }),
                        None => {
                            stroke += 1;
                            (stroke, op(&field, seq))
                        }
                    }
                } else {
                    stroke += 1;
                    (stroke, op(&field, seq))
                };
                match history.apply(&mut field, st, &op) {
                    Ok(_) => s.append(&LogEntry::new(seq, st, op)).unwrap(),
                    Err(_) => seq -= 1,
                }
            } else if r < 65 {
                s.bake(&field, &history, seq).unwrap();
            } else if r < 75 {
                let mut p = Store::prepare_bake(&s.baked(), &field, &history, seq, None);
                let bytes = 1 + (mix(&mut z) % 4000) as usize;
                while !s.write_bake_part(&mut p, bytes).unwrap() {}
                s.commit_bake(p).unwrap();
            } else if r < 80 {
                // Parts written, never committed.
                let mut p = Store::prepare_bake(&s.baked(), &field, &history, seq, None);
                s.write_bake_part(&mut p, 1 + (mix(&mut z) % 3000) as usize)
                    .unwrap();
                abandoned = Some(p);
            } else if r < 85 {
                s.compact().unwrap();
            } else if r < 92 {
                drop(store.take());
                abandoned = None;
                let mut s = Store::open(&path).unwrap();
                let w = s.load(base()).unwrap();
                assert_eq!(w.field.hash(), field.hash(), "seed {seed} step {step}");
                assert_eq!(w.history, history, "seed {seed} step {step}");
                assert_eq!(w.last_seq, seq);
                (field, history) = (w.field, w.history);
                store = Some(s);
            } else {
                // Reopened without a load: the store does not know its strokes.
                drop(store.take());
                abandoned = None;
                store = Some(Store::open(&path).unwrap());
            }
        }
        drop(abandoned);
        drop(store.take());
        check_loads(&path, &field, &history);
    }
}
