//! Online backups: a copy made a page at a time while ops are appended and a bake is written
//! holds everything up to its completion and loads as the live world did then.

use std::path::Path;

use loam_store::{Store, StoreError};

use crate::bake_parts::{check_loads, new_world, run};

/// Files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_backup_made_between_appends_loads_as_the_world_at_its_end() {
    let (dir, _path, mut field, mut history, mut store) = new_world(1 << 20);
    run(&mut store, &mut field, &mut history, 1, 40);
    store.bake(&field, &history, 40).unwrap();
    run(&mut store, &mut field, &mut history, 41, 60);
    let copy = dir.path().join("copy.loam");
    store.begin_backup(&copy).unwrap();
    assert!(store.backing_up());
    // A second one while the first runs is refused.
    assert!(matches!(
        store.begin_backup(&dir.path().join("other.loam")),
        Err(StoreError::Backup { .. })
    ));
    // One page a step, an op appended after each step, a bake in the middle: the copy follows.
    let mut seq = 60;
    let mut baked = false;
    let (done, at_copy) = loop {
        if let Some(copy) = store.backup_step(1).unwrap() {
            assert_eq!(copy.last_seq(), seq);
            // The store is free before the copy is synced and renamed: an op appended now
            // is not in it.
            let at_copy = (field.clone(), history.clone());
            run(&mut store, &mut field, &mut history, seq + 1, seq + 1);
            assert!(files(dir.path()).contains(&"copy.loam.part".to_string()));
            break (copy.complete().unwrap(), at_copy);
        }
        assert!(files(dir.path()).contains(&"copy.loam.part".to_string()));
        seq += 1;
        run(&mut store, &mut field, &mut history, seq, seq);
        if seq == 70 && !baked {
            store.bake(&field, &history, seq).unwrap();
            baked = true;
        }
        assert!(seq < 10_000, "the backup never finished");
    };
    assert!(baked, "the copy took more than ten steps");
    assert!(!store.backing_up());
    assert_eq!(done.path, copy);
    assert_eq!(done.last_seq, seq);
    assert!(done.pages > 10);
    assert!(!files(dir.path()).iter().any(|f| f.ends_with(".part")));
    // The copy is a world of its own, at rest (no WAL beside it): the live world at the end
    // of the backup.
    assert_eq!(
        files(dir.path())
            .iter()
            .filter(|f| f.starts_with("copy"))
            .count(),
        1
    );
    check_loads(&copy, &at_copy.0, &at_copy.1);
    let info = Store::open(&copy).unwrap().info().unwrap();
    assert_eq!((info.last_seq, info.bake_seq), (seq, 70));
    let seq = seq + 1;
    // The world goes on and loads with everything.
    run(&mut store, &mut field, &mut history, seq + 1, seq + 5);
    drop(store);
    check_loads(&dir.path().join("w.loam"), &field, &history);
}

/// The files in `dir` but the open world's WAL and (on Linux, `lock.rs`) its shared-memory
/// index.
fn beside_open_world(dir: &Path) -> Vec<String> {
    files(dir)
        .into_iter()
        .filter(|f| f != "w.loam-wal" && f != "w.loam-shm")
        .collect()
}

#[test]
fn a_backup_abandoned_or_refused_leaves_nothing() {
    let (dir, path, mut field, mut history, mut store) = new_world(64 << 20);
    run(&mut store, &mut field, &mut history, 1, 30);
    // Over an existing file: refused, the file untouched.
    let taken = dir.path().join("taken.loam");
    std::fs::write(&taken, b"mine").unwrap();
    assert!(matches!(
        store.begin_backup(&taken),
        Err(StoreError::Exists { .. })
    ));
    assert_eq!(std::fs::read(&taken).unwrap(), b"mine");
    // Cancelled half way, and dropped half way: no part left, the world intact.
    for cancel in [true, false] {
        store.begin_backup(&dir.path().join("b.loam")).unwrap();
        assert!(store.backup_step(1).unwrap().is_none());
        if cancel {
            store.cancel_backup();
        } else {
            drop(store);
            store = Store::open(&path).unwrap();
        }
        assert_eq!(beside_open_world(dir.path()), ["taken.loam", "w.loam"]);
    }
    // Copied whole but dropped before it was completed: no part left either.
    store.begin_backup(&dir.path().join("b.loam")).unwrap();
    let copy = loop {
        if let Some(c) = store.backup_step(1_000).unwrap() {
            break c;
        }
    };
    drop(copy);
    assert_eq!(beside_open_world(dir.path()), ["taken.loam", "w.loam"]);
    assert!(
        store.backup_step(8).unwrap().is_none(),
        "no backup in progress"
    );
    drop(store);
    check_loads(&path, &field, &history);
    // A read-only world makes no backup.
    let mut ro = Store::open_read_only(&path).unwrap();
    assert!(matches!(
        ro.begin_backup(&dir.path().join("c.loam")),
        Err(StoreError::ReadOnly { .. })
    ));
}
