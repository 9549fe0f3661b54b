//! Format migrations: each takes a world file one format version up inside the open's
//! transaction.

use loam_field::FieldSettings;
use rusqlite::params;

use crate::brick_blob;
use crate::error::StoreError;
use crate::strokes;

/// A migration takes a world from one format to the next inside one transaction.
pub(crate) type Migration =
    fn(&rusqlite::Transaction<'_>, &FieldSettings) -> Result<(), StoreError>;

/// The migrations, append only: `MIGRATIONS[i]` takes format `i + 1` to `i + 2`.
pub(crate) const MIGRATIONS: &[Migration] = &[migrate_1_to_2, migrate_2_to_3, migrate_3_to_4];

/// Format 3 → 4: bricks keyed by their bake sequence too (a bake's rows may be written
/// ahead of its commit), and the undo history split into a header and rows of strokes (a
/// bake writes only the strokes that changed).
fn migrate_3_to_4(tx: &rusqlite::Transaction<'_>, _: &FieldSettings) -> Result<(), StoreError> {
    tx.execute_batch(
        "CREATE TABLE bricks_4 (
            x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL,
            seq INTEGER NOT NULL, data BLOB NOT NULL,
            PRIMARY KEY (z, y, x, seq)
        ) WITHOUT ROWID;
        INSERT INTO bricks_4 (x, y, z, seq, data) SELECT x, y, z, seq, data FROM bricks;
        DROP TABLE bricks;
        ALTER TABLE bricks_4 RENAME TO bricks;",
    )?;
    tx.execute_batch(strokes::STROKES_SCHEMA)?;
    let saved = strokes::history_row(tx)?;
    if let Some((seq, blob)) = saved {
        let history = strokes::decode_whole(seq, &blob)?;
        let kept: Vec<_> = history.shared_strokes().collect();
        strokes::put_rows(tx, seq as u64, &strokes::encode_rows(seq as u64, &kept))?;
        tx.execute(
            "UPDATE history SET data = ?1 WHERE id = 1",
            [strokes::encode_header(seq as u64, &history.header())],
        )?;
    }
    Ok(())
}

/// Format 2 → 3: the block tables, empty (`block_ops` beside `ops` in one sequence
/// numbering, `blocks` for the snapshot at a bake); nothing else changes.
fn migrate_2_to_3(tx: &rusqlite::Transaction<'_>, _: &FieldSettings) -> Result<(), StoreError> {
    tx.execute_batch(crate::blocks::BLOCK_SCHEMA)?;
    Ok(())
}

/// Format 1 → 2: every baked brick's f32 values rounded onto the quantisation grid of the
/// world's band and rewritten as 16-bit indices (the ops, the history and the metadata keep
/// their formats; the history's kept values are rounded when an undo writes them).
fn migrate_1_to_2(
    tx: &rusqlite::Transaction<'_>,
    settings: &FieldSettings,
) -> Result<(), StoreError> {
    let band = settings.band();
    let mut rewritten = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT x, y, z, data FROM bricks")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i32>(0)?,
                r.get::<_, i32>(1)?,
                r.get::<_, i32>(2)?,
                r.get::<_, Vec<u8>>(3)?,
            ))
        })?;
        for row in rows {
            let (x, y, z, blob) = row?;
            let brick = brick_blob::decode_v1([x, y, z], &blob, band)
                .ok_or(StoreError::CorruptBrick { key: [x, y, z] })?;
            rewritten.push(([x, y, z], brick_blob::encode([x, y, z], &brick)));
        }
    }
    let mut put = tx.prepare("UPDATE bricks SET data = ?4 WHERE x = ?1 AND y = ?2 AND z = ?3")?;
    for ([x, y, z], blob) in rewritten {
        put.execute(params![x, y, z, blob])?;
    }
    Ok(())
}
