//! Blocks in the world file (format 3): block ops in the op log beside terrain ops, one
//! sequence numbering; the blocks snapshot baked with the field; bad blobs are typed errors.
//! The store keeps the bytes opaque, so these tests use made-up bytes (loam-blocks' own
//! tests store real block worlds).

use loam_field::{CsgMode, EditOp, Field, History, LogEntry};
use loam_store::{BlockLogEntry, LogRecord, Replayed, Store, StoreError};

use crate::store::{GEN, base, rusqlite_conn};

fn dig(x: f64, field: &Field) -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, field.generator().surface_height(x, 3.0), 3.0],
        radius: 2.5,
        material: 0,
        blend: 0.0,
    }
}

fn block(seq: u64, step: u64) -> BlockLogEntry {
    BlockLogEntry {
        seq,
        step,
        op: format!("block op {seq} at step {step}").into_bytes(),
    }
}

/// A log of terrain ops (odd sequence numbers, strokes 1, 2, …) and block ops (even, at
/// steps 10 · seq) up to `n`: applied to a live field, appended. Returns the field, the
/// history and the field hash after each op.
fn write_mixed(store: &mut Store, n: u64) -> (Field, History, Vec<String>) {
    let mut field = base();
    let mut history = History::default();
    let mut hashes = vec![field.hash().to_string()];
    for seq in 1..=n {
        if seq % 2 == 1 {
            let op = dig(seq as f64 * 6.0, &field);
            history.apply(&mut field, seq.div_ceil(2), &op).unwrap();
            store
                .append(&LogEntry::new(seq, seq.div_ceil(2), op))
                .unwrap();
        } else {
            store.append_block(&block(seq, seq * 10)).unwrap();
        }
        hashes.push(field.hash().to_string());
    }
    (field, history, hashes)
}

#[test]
fn block_ops_share_the_log_and_come_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let mut store = Store::create(&path, GEN, base().settings(), None).unwrap();
    assert_eq!(store.format_version(), loam_store::FORMAT_VERSION);
    let (live, _, hashes) = write_mixed(&mut store, 6);
    // Either kind must follow the last op of either kind.
    assert!(matches!(
        store.append_block(&block(6, 1)),
        Err(StoreError::OutOfOrder { last: 6, got: 6 })
    ));
    assert!(matches!(
        store.append_block(&block(8, 1)),
        Err(StoreError::OutOfOrder { last: 6, got: 8 })
    ));
    assert!(matches!(
        store.append(&LogEntry::new(6, 9, dig(0.0, &live))),
        Err(StoreError::OutOfOrder { .. })
    ));
    drop(store);

    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.last_seq(), 6, "the last op is a block op");
    let log = store.log_after(0).unwrap();
    let kinds: Vec<(u64, bool)> = log
        .iter()
        .map(|r| (r.seq(), matches!(r, LogRecord::Block(_))))
        .collect();
    assert_eq!(kinds, (1..=6).map(|s| (s, s % 2 == 0)).collect::<Vec<_>>());
    assert_eq!(log[1], LogRecord::Block(block(2, 20)));
    assert_eq!(store.ops_after(0).unwrap().len(), 3, "terrain ops alone");
    assert_eq!(
        store.block_ops_after(3).unwrap(),
        vec![block(4, 40), block(6, 60)]
    );
    let info = store.info().unwrap();
    assert_eq!((info.ops, info.block_ops, info.last_seq), (3, 3, 6));

    // A load replays the terrain and hands the block ops back; `load_with` shows each
    // block op with the field of its time.
    let loaded = store.load(base()).unwrap();
    assert_eq!(loaded.field.hash(), live.hash());
    assert_eq!(loaded.last_seq, 6);
    assert_eq!(loaded.blocks, None);
    assert_eq!(
        loaded.block_ops,
        vec![block(2, 20), block(4, 40), block(6, 60)]
    );
    let mut seen = Vec::new();
    store
        .load_with(base(), |field, r| {
            match r {
                Replayed::Terrain(e, outcome) => {
                    assert!(outcome.samples_changed > 0);
                    seen.push((e.seq, field.hash().to_string()));
                }
                Replayed::Block(e) => seen.push((e.seq, field.hash().to_string())),
                Replayed::Baked { seq } => seen.push((seq, field.hash().to_string())),
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
    let want: Vec<(u64, String)> = (0..=6).map(|s| (s, hashes[s as usize].clone())).collect();
    assert_eq!(seen, want);
    // A failing visit stops the load with the record named.
    let e = store
        .load_with(base(), |_, r| match r {
            Replayed::Block(b) if b.seq == 4 => Err("no such block"),
            _ => Ok(()),
        })
        .unwrap_err();
    assert!(matches!(e, StoreError::Visit { seq: 4, .. }), "{e}");
}

#[test]
fn a_world_with_blocks_bakes_them_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let mut store = Store::create(&path, GEN, base().settings(), None).unwrap();
    let (field, history, _) = write_mixed(&mut store, 5);
    // Without blocks a bake would leave the block ops behind: refused, nothing written.
    let before = store.info().unwrap();
    let e = store.bake(&field, &history, 5).unwrap_err();
    assert!(matches!(e, StoreError::BlocksNotBaked { seq: 2 }), "{e}");
    assert_eq!(store.info().unwrap().bake_seq, before.bake_seq);
    // Before the first block op it is fine.
    let mut f1 = base();
    let mut h1 = History::default();
    let first = dig(6.0, &f1);
    h1.apply(&mut f1, 1, &first).unwrap();
    store.bake(&f1, &h1, 1).unwrap();

    let snapshot: Vec<u8> = (0..5000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
    store
        .bake_with_blocks(&field, &history, 5, 777, &snapshot)
        .unwrap();
    store.append_block(&block(6, 800)).unwrap();
    assert_eq!(store.compact().unwrap(), 5, "3 terrain ops and 2 block ops");
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let saved = store.blocks().unwrap().unwrap();
    assert_eq!((saved.seq, saved.step), (5, 777));
    assert_eq!(saved.data, snapshot, "kept bit for bit");
    let loaded = store.load(base()).unwrap();
    assert_eq!(loaded.field.hash(), field.hash());
    assert_eq!(loaded.blocks, Some(saved));
    assert_eq!(loaded.block_ops, vec![block(6, 800)]);
    assert_eq!(loaded.last_seq, 6);
    // Once a world has a snapshot, every bake carries one.
    assert!(matches!(
        store.bake(&loaded.field, &loaded.history, 6),
        Err(StoreError::BlocksNotBaked { seq: 5 })
    ));
    store
        .bake_with_blocks(&loaded.field, &loaded.history, 6, 801, b"later")
        .unwrap();
    assert_eq!(store.blocks().unwrap().unwrap().data, b"later");
    let info = store.info().unwrap();
    assert_eq!((info.block_ops, info.bake_seq), (1, 6));
}

#[test]
fn damaged_block_blobs_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &str| {
        let path = dir.path().join(name);
        let mut store = Store::create(&path, GEN, base().settings(), None).unwrap();
        let (field, history, _) = write_mixed(&mut store, 4);
        store
            .bake_with_blocks(&field, &history, 4, 40, b"the blocks")
            .unwrap();
        write_more(&mut store);
        drop(store);
        path
    };
    fn write_more(store: &mut Store) {
        store.append_block(&block(5, 50)).unwrap();
        store.append_block(&block(6, 60)).unwrap();
    }

    // A flipped bit in a block op.
    let path = make("op.loam");
    let c = rusqlite_conn(&path);
    let mut op: Vec<u8> = c
        .query_row("SELECT op FROM block_ops WHERE seq = 6", [], |r| r.get(0))
        .unwrap();
    op[3] ^= 4;
    c.execute("UPDATE block_ops SET op = ?1 WHERE seq = 6", [op])
        .unwrap();
    drop(c);
    let mut store = Store::open(&path).unwrap();
    let e = store.load(base()).unwrap_err();
    assert!(matches!(e, StoreError::CorruptBlockOp { seq: 6 }), "{e}");
    drop(store);

    // A block op moved to another sequence number.
    let path = make("moved.loam");
    rusqlite_conn(&path)
        .execute_batch("UPDATE block_ops SET seq = 7 WHERE seq = 6")
        .unwrap();
    let e = Store::open(&path).unwrap().load(base()).unwrap_err();
    assert!(matches!(e, StoreError::CorruptBlockOp { seq: 7 }), "{e}");

    // A damaged snapshot, and one from another bake.
    let path = make("snapshot.loam");
    rusqlite_conn(&path)
        .execute("UPDATE blocks SET data = x'0102030405060708090a0b'", [])
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let mut ro = Store::open_read_only(&path).unwrap();
    assert!(matches!(ro.blocks(), Err(StoreError::CorruptBlocks(_))));
    assert!(matches!(ro.load(base()), Err(StoreError::CorruptBlocks(_))));
    drop(ro);
    assert!(
        std::fs::read(&path).unwrap() == before,
        "a failed load writes nothing"
    );
    let e = Store::open(&path).unwrap().load(base()).unwrap_err();
    assert!(matches!(e, StoreError::CorruptBlocks(_)), "{e}");
    let path = make("stale.loam");
    rusqlite_conn(&path)
        .execute("UPDATE blocks SET seq = 3", [])
        .unwrap();
    let e = Store::open(&path).unwrap().load(base()).unwrap_err();
    assert!(matches!(e, StoreError::CorruptBlocks(_)), "{e}");

    // A gap where a block op was.
    let path = make("gap.loam");
    rusqlite_conn(&path)
        .execute("DELETE FROM block_ops WHERE seq = 5", [])
        .unwrap();
    let e = Store::open(&path).unwrap().load(base()).unwrap_err();
    assert!(
        matches!(e, StoreError::OutOfOrder { last: 4, got: 6 }),
        "{e}"
    );
}
