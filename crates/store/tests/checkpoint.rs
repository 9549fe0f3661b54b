//! The background checkpointer (`Store::checkpoint_in_background`): the log is copied into
//! the file beside the appends, the lock still keeps everyone else out, and a clean close
//! still leaves one file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loam_store::{Store, StoreError};

use crate::bake_parts::{check_loads, new_world, run};

fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    p.into()
}

/// Appends that stay far below SQLite's automatic checkpoint (1 000 pages, and the store's
/// raised mark) still reach the database file: the checkpointer copied them. Then a reader is
/// kept out as before, and a clean close folds the log in and leaves no `-wal` or `-shm`.
#[test]
fn the_checkpointer_copies_the_log_into_the_file_beside_the_appends() {
    let (_dir, path, mut field, mut history, mut store) = new_world(64 << 20);
    if !store
        .checkpoint_in_background(Duration::from_millis(10))
        .unwrap()
    {
        // One connection only on this system (lock.rs): nothing to check.
        return;
    }
    let before = std::fs::metadata(&path).unwrap().len();
    run(&mut store, &mut field, &mut history, 1, 200);
    let wal = std::fs::metadata(beside(&path, "-wal")).unwrap().len();
    assert!(wal > 100 * 4096, "200 appends, 200+ frames: {wal} bytes");
    let deadline = Instant::now() + Duration::from_secs(10);
    let grew = loop {
        let now = std::fs::metadata(&path).unwrap().len();
        if now > before || Instant::now() > deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        grew > before,
        "the file is still {grew} bytes: nothing was checkpointed"
    );
    assert!(matches!(
        Store::open_read_only(&path),
        Err(StoreError::InUse { .. })
    ));
    assert!(matches!(Store::open(&path), Err(StoreError::InUse { .. })));
    // Appends go on while it runs, and a second start changes nothing.
    assert!(
        store
            .checkpoint_in_background(Duration::from_millis(10))
            .unwrap()
    );
    run(&mut store, &mut field, &mut history, 201, 260);
    drop(store);
    assert!(!beside(&path, "-wal").exists(), "the log is folded in");
    assert!(!beside(&path, "-shm").exists(), "no index is left");
    check_loads(&path, &field, &history);
}

/// A read-only store cannot run one: a typed error, nothing started.
#[test]
fn a_read_only_store_refuses_the_checkpointer() {
    let (_dir, path, mut field, mut history, mut store) = new_world(64 << 20);
    run(&mut store, &mut field, &mut history, 1, 5);
    drop(store);
    let mut ro = Store::open_read_only(&path).unwrap();
    assert!(matches!(
        ro.checkpoint_in_background(Duration::from_millis(10)),
        Err(StoreError::ReadOnly { .. })
    ));
    drop(ro);
    check_loads(&path, &field, &history);
}
