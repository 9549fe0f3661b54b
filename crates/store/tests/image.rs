//! Worlds in memory: made there, written to bytes and read back, and the same bytes as a
//! world file (`Store::create_in_memory`, `Store::image`, `Store::from_image`).

use loam_field::{FieldSettings, History, LogEntry};
use loam_store::{Store, StoreError};

use crate::store::{GEN, base, script, write_script, write_world};

/// The script of `store.rs` applied to a world in memory, baking every `bake_every` ops.
fn write_in_memory(bake_every: usize) -> (Store, loam_field::Field, History) {
    let mut store = Store::create_in_memory("test", GEN, base().settings(), None).unwrap();
    assert!(store.in_memory());
    let (field, history) = write_script(&mut store, bake_every);
    (store, field, history)
}

#[test]
fn a_world_in_memory_comes_back_from_its_image_and_opens_as_a_file() {
    for bake_every in [0, 7] {
        let (mut store, live, history) = write_in_memory(bake_every);
        let image = store.image().unwrap();
        drop(store);

        // Read back in memory: the same field bit for bit, the same history and log end.
        let mut back = Store::from_image("back", &image).unwrap();
        assert_eq!(back.last_seq(), 33);
        let loaded = back.load(base()).unwrap();
        assert_eq!(loaded.field.hash(), live.hash(), "bake every {bake_every}");
        assert_eq!(loaded.history, history);
        assert_eq!(back.integrity_check().unwrap(), Ok(()));
        // It goes on: another op, then its image holds it too.
        let op = script(&live).remove(0).1;
        back.append(&LogEntry::new(34, 99, op)).unwrap();
        let again = Store::from_image("again", &back.image().unwrap()).unwrap();
        assert_eq!(again.last_seq(), 34);

        // The same bytes are a world file that the file store opens.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("from-memory.loam");
        std::fs::write(&path, &image).unwrap();
        let mut file = Store::open(&path).unwrap();
        assert_eq!(file.integrity_check().unwrap(), Ok(()));
        let info = file.info().unwrap();
        assert_eq!((info.last_seq, info.generator_json.as_str()), (33, GEN));
        assert_eq!(info.field, FieldSettings::default());
        assert_eq!(file.load(base()).unwrap().field.hash(), live.hash());
    }
}

/// A world file written by the file store (write-ahead-log mode while open, closed cleanly)
/// opens from its bytes, and its image opens as a file again.
#[test]
fn a_world_file_opens_from_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let (live, history) = write_world(&path, 10);
    let bytes = std::fs::read(&path).unwrap();
    let mut store = Store::from_image("w.loam", &bytes).unwrap();
    let loaded = store.load(base()).unwrap();
    assert_eq!(loaded.field.hash(), live.hash());
    assert_eq!(loaded.history, history);
    assert_eq!(loaded.last_seq, 33);
    // Opening never wrote to the caller's bytes.
    assert_eq!(bytes, std::fs::read(&path).unwrap());
}

/// Bytes that are not a Loam world get the file store's typed errors; nothing panics.
#[test]
fn bad_images_get_typed_errors() {
    let not_sqlite = Store::from_image("junk", b"not a world at all").unwrap_err();
    assert!(
        matches!(&not_sqlite, StoreError::NotSqlite { path } if path.as_os_str() == "junk"),
        "{not_sqlite}"
    );
    // An SQLite database of something else.
    let mut other = rusqlite::Connection::open_in_memory().unwrap();
    other
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    let foreign = other.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
    let err = Store::from_image("other", &foreign).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err}");
    // A world cut short, or with its pages damaged: an error, never a world.
    let (mut store, _, _) = write_in_memory(7);
    let image = store.image().unwrap();
    for cut in [image.len() / 2, image.len() - 1, 100] {
        assert!(
            Store::from_image("cut", &image[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut damaged = image.clone();
    for b in damaged[image.len() / 3..image.len() / 3 + 4096].iter_mut() {
        *b ^= 0x5a;
    }
    if let Ok(mut s) = Store::from_image("damaged", &damaged) {
        // SQLite reads pages lazily: the damage shows when they are read.
        let loaded = s.load(base());
        let check = s.integrity_check();
        assert!(
            loaded.is_err() || !matches!(check, Ok(Ok(()))),
            "a damaged image loaded as a sound world"
        );
    }
}
