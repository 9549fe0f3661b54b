//! Older worlds: `tests/fixtures/world-v1.loam` and `world-v2.loam` were written by format 1's
//! and format 2's own code (see `tests/fixtures/README.md`). Read-only they load as they
//! are; a writable open migrates them to the current format (3), one transaction per step;
//! both give the same world, and it keeps working after.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use loam_field::{CsgMode, EditOp, LogEntry, Quant};
use loam_store::{FORMAT_VERSION, Store, StoreError};

use crate::store::base;

fn fixture_copy(dir: &Path) -> PathBuf {
    fixture("world-v1.loam", dir)
}

fn fixture(name: &str, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let dst = dir.join(name);
    std::fs::copy(src, &dst).unwrap();
    dst
}

type Samples = (Vec<f32>, Vec<u8>);

/// Every baked brick's samples, decoded straight from the file (independently of the store):
/// format 1 as f32 values, format 2 as grid indices turned into values.
fn baked(path: &Path, band: f64) -> BTreeMap<[i32; 3], (u8, Samples)> {
    const N: usize = 32 * 32 * 32;
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut stmt = c.prepare("SELECT x, y, z, data FROM bricks").unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(([r.get(0)?, r.get(1)?, r.get(2)?], r.get::<_, Vec<u8>>(3)?))
        })
        .unwrap();
    let g = Quant::new(band);
    let mut out = BTreeMap::new();
    for row in rows {
        let (key, blob) = row.unwrap();
        let payload = &blob[..blob.len() - 8]; // less the checksum tag
        let kind = payload[0];
        let samples = match kind {
            0 => {
                let v = f32::from_le_bytes(payload[1..5].try_into().unwrap());
                (vec![v; N], vec![payload[5]; N])
            }
            1 => {
                let raw = zstd::bulk::decompress(&payload[1..], N * 5).unwrap();
                let v = raw[..N * 4]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                (v, raw[N * 4..].to_vec())
            }
            2 => {
                let q = i16::from_le_bytes([payload[1], payload[2]]);
                (vec![g.value(q); N], vec![payload[3]; N])
            }
            3 => {
                let raw = zstd::bulk::decompress(&payload[1..], N * 3).unwrap();
                let v = raw[..N * 2]
                    .chunks_exact(2)
                    .map(|b| g.value(i16::from_le_bytes([b[0], b[1]])))
                    .collect();
                (v, raw[N * 2..].to_vec())
            }
            k => panic!("unknown blob kind {k}"),
        };
        out.insert(key, (kind, samples));
    }
    out
}

#[test]
fn a_format_1_world_loads_read_only_and_migrates_on_a_writable_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    let band = base().settings().band();
    let original = std::fs::read(&path).unwrap();

    // Read-only: read as format 1, nothing written.
    let mut ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.format_version(), 1);
    assert_eq!(ro.info().unwrap().format_version, 1);
    let read = ro.load(base()).unwrap();
    assert_eq!(read.last_seq, 9);
    assert!(
        read.field.brick_count() > 4,
        "the ops after the bake made bricks"
    );
    assert!(matches!(
        ro.bake(&read.field, &read.history, 9),
        Err(StoreError::ReadOnly { .. })
    ));
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), original, "not written");
    let v1 = baked(&path, band);
    assert!(v1.len() >= 4 && v1.values().all(|(kind, _)| *kind <= 1));

    // Writable: migrated (1 → 2 → 3 → 4), then the same world as read-only.
    let mut rw = Store::open(&path).unwrap();
    assert_eq!(rw.format_version(), FORMAT_VERSION);
    assert_eq!(rw.info().unwrap().format_version, FORMAT_VERSION);
    assert_eq!(rw.block_ops_after(0).unwrap(), vec![]);
    assert_eq!(rw.blocks().unwrap(), None);
    assert_eq!(rw.integrity_check().unwrap(), Ok(()));
    let mut migrated = rw.load(base()).unwrap();
    assert_eq!(migrated.last_seq, 9);
    assert_eq!(migrated.field.hash(), read.field.hash());
    assert_eq!(migrated.history, read.history);
    drop(rw);

    // Every baked sample is its format-1 value rounded onto the grid: within half a step,
    // the same sign (solid stays solid, air stays air), the same material.
    let v2 = baked(&path, band);
    assert_eq!(v1.keys().collect::<Vec<_>>(), v2.keys().collect::<Vec<_>>());
    let g = Quant::new(band);
    let half = f64::from(g.step()) * 0.5 + 1e-9;
    let mut moved = 0;
    for (key, (_, (old, old_m))) in &v1 {
        let (kind, (new, new_m)) = &v2[key];
        assert!(*kind >= 2, "{key:?} rewritten in format 2");
        assert_eq!(old_m, new_m, "{key:?}");
        for (a, b) in old.iter().zip(new) {
            assert_eq!(b.to_bits(), g.quantize(f64::from(*a)).to_bits());
            assert_eq!(*a < 0.0, *b < 0.0, "{key:?}: {a} became {b}");
            assert!(f64::from(a - b).abs() <= half, "{key:?}: {a} became {b}");
            moved += usize::from(a.to_bits() != b.to_bits());
        }
    }
    assert!(
        moved > 1000,
        "format 1 values were off the grid: {moved} moved"
    );

    // The migrated world keeps working: undo of a stroke from before the bake (its kept
    // values come from format 1's history), a new op, a bake, a reopen.
    let mut rw = Store::open(&path).unwrap();
    assert_eq!(rw.load(base()).unwrap().field.hash(), read.field.hash());
    let mut field = migrated.field.clone();
    migrated
        .history
        .apply(&mut field, 0, &EditOp::Undo { stroke: 6 })
        .unwrap();
    let h = field.generator().surface_height(20.0, 3.0);
    let op = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [20.0, h, 3.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    };
    migrated.history.apply(&mut field, 8, &op).unwrap();
    rw.append(&LogEntry::new(10, 0, EditOp::Undo { stroke: 6 }))
        .unwrap();
    rw.append(&LogEntry::new(11, 8, op)).unwrap();
    rw.bake(&field, &migrated.history, 11).unwrap();
    rw.compact().unwrap();
    drop(rw);
    let again = Store::open(&path).unwrap().load(base()).unwrap();
    assert_eq!(again.field.hash(), field.hash());
    assert_eq!(again.last_seq, 11);
}

#[test]
fn a_failed_migration_leaves_format_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute(
            "UPDATE bricks SET data = x'01deadbeef' WHERE y = (SELECT MAX(y) FROM bricks)",
            [],
        )
        .unwrap();
    }
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::CorruptBrick { .. }), "{e}");
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.format_version(), 1, "rolled back");
    let kinds: Vec<u8> = baked_kinds(&path);
    assert!(kinds.iter().all(|&k| k <= 1), "{kinds:?}");
}

fn baked_kinds(path: &Path) -> Vec<u8> {
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut stmt = c.prepare("SELECT data FROM bricks").unwrap();
    stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|b| b.unwrap()[0])
        .collect()
}

/// The field hash of `world-v2.loam` after its 9 ops (its README).
const V2_HASH: &str = "15b3749473a4be9367de2e105caa13bb681cd7955b16de2b6b7ff10d877ba986";

#[test]
fn a_format_2_world_loads_read_only_and_migrates_to_the_newest_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("world-v2.loam", dir.path());
    let original = std::fs::read(&path).unwrap();

    // Read-only: format 2, no block tables, no blocks, nothing written.
    let mut ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.format_version(), 2);
    let read = ro.load(base()).unwrap();
    assert_eq!(read.field.hash().to_string(), V2_HASH);
    assert_eq!(read.last_seq, 9);
    assert_eq!((read.blocks.clone(), read.block_ops.len()), (None, 0));
    assert_eq!(ro.log_after(0).unwrap().len(), 9);
    assert_eq!(ro.info().unwrap().block_ops, 0);
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), original, "not written");

    // Writable: migrated to 3, the same world, the bricks untouched.
    let before = baked(&path, base().settings().band());
    let mut rw = Store::open(&path).unwrap();
    assert_eq!(rw.format_version(), FORMAT_VERSION);
    assert_eq!(rw.info().unwrap().format_version, FORMAT_VERSION);
    assert_eq!(rw.integrity_check().unwrap(), Ok(()));
    let mut w = rw.load(base()).unwrap();
    assert_eq!(w.field.hash().to_string(), V2_HASH);
    assert_eq!(w.history, read.history);
    assert_eq!(w.last_seq, 9);
    drop(rw);
    assert_eq!(baked(&path, base().settings().band()), before);

    // It takes block ops and a blocks snapshot now, and keeps them.
    let mut rw = Store::open(&path).unwrap();
    rw.append_block(&loam_store::BlockLogEntry {
        seq: 10,
        step: 3,
        op: b"a block op".to_vec(),
    })
    .unwrap();
    let h = w.field.generator().surface_height(20.0, 3.0);
    let op = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [20.0, h, 3.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    };
    w.history.apply(&mut w.field, 8, &op).unwrap();
    rw.append(&LogEntry::new(11, 8, op)).unwrap();
    rw.bake_with_blocks(&w.field, &w.history, 11, 5, b"blocks")
        .unwrap();
    rw.compact().unwrap();
    drop(rw);
    let mut rw = Store::open(&path).unwrap();
    let again = rw.load(base()).unwrap();
    assert_eq!(again.field.hash(), w.field.hash());
    assert_eq!(again.blocks.unwrap().data, b"blocks");
    assert_eq!(again.last_seq, 11);
}

#[test]
fn a_failed_migration_leaves_format_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture("world-v2.loam", dir.path());
    // A table in the way of the migration's.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE blocks (x)")
        .unwrap();
    assert!(matches!(Store::open(&path), Err(StoreError::Sqlite(_))));
    let mut ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.format_version(), 2, "rolled back");
    assert_eq!(ro.load(base()).unwrap().field.hash().to_string(), V2_HASH);
    let c = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'block_ops'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
}
