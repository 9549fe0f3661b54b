//! The undo history in rows (format 4): a header row and the strokes in batches, so that a
//! bake writes only the strokes that are new or changed since the last bake.
//!
//! - `history(id = 1, seq, data)`: [`HistoryHeader`] (zstd of MessagePack, sealed with `seq`).
//! - `strokes(seq, first, last, data)`: strokes `first ..= last` (ids; not every id in between
//!   need be a stroke) as a bake at op `seq` wrote them (zstd of a MessagePack list, sealed
//!   with `seq, first`).
//!
//! A stroke's version is the one in the row of highest `seq` up to the bake (a changed stroke
//! is written again by a later bake); the history's strokes are those from the header's
//! `first` id on (only the oldest strokes are ever forgotten). Rows of a bake not yet
//! committed have a `seq` above the bake's and are not read; rows wholly older than the
//! header's `first` are deleted after a bake.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

use loam_field::{History, HistoryHeader, SharedStroke};
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::tag;

/// The strokes table (format 4).
pub(crate) const STROKES_SCHEMA: &str = "
CREATE TABLE strokes (
    seq INTEGER NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (seq, first)
) WITHOUT ROWID;
CREATE INDEX strokes_last ON strokes (last);
";

/// MessagePack bytes of strokes per row, before compression.
const ROW_BYTES: usize = 256 << 10;

/// One row of strokes, encoded: `(first id, last id, sealed blob)`.
pub(crate) type StrokeRow = (u64, u64, Vec<u8>);

fn compress(raw: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(raw, 3).expect("compressing to memory")
}

fn decompress(blob: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut raw = Vec::new();
    zstd::stream::read::Decoder::new(blob)
        .and_then(|mut d| d.read_to_end(&mut raw))
        .map_err(|e| StoreError::CorruptHistory(e.to_string()))?;
    Ok(raw)
}

/// The sealed header row of a bake at op `seq`.
pub(crate) fn encode_header(seq: u64, header: &HistoryHeader) -> Vec<u8> {
    let raw = rmp_serde::to_vec(header).expect("a header serialises");
    tag::seal(&tag::key(&[seq as i64]), compress(&raw))
}

/// `strokes` (ascending ids) in rows of about [`ROW_BYTES`] each, sealed for a bake at `seq`.
/// A row's payload is its strokes' MessagePack values one after another.
pub(crate) fn encode_rows(seq: u64, strokes: &[SharedStroke]) -> Vec<StrokeRow> {
    let mut rows = Vec::new();
    let mut raw = Vec::new();
    let mut first = None;
    for (i, s) in strokes.iter().enumerate() {
        first.get_or_insert(s.id());
        rmp_serde::encode::write(&mut raw, s).expect("a stroke serialises");
        if raw.len() >= ROW_BYTES || i + 1 == strokes.len() {
            let f = first.take().expect("set above");
            let blob = tag::seal(&tag::key(&[seq as i64, f as i64]), compress(&raw));
            rows.push((f, s.id(), blob));
            raw.clear();
        }
    }
    rows
}

/// The strokes of a row's payload.
fn decode_row(payload: &[u8]) -> Result<Vec<SharedStroke>, String> {
    let mut cursor = std::io::Cursor::new(payload);
    let mut out = Vec::new();
    while (cursor.position() as usize) < payload.len() {
        let mut de = rmp_serde::Deserializer::new(&mut cursor);
        out.push(serde::Deserialize::deserialize(&mut de).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// Writes rows of a bake at `seq` (replacing rows of the same key).
pub(crate) fn put_rows(conn: &Connection, seq: u64, rows: &[StrokeRow]) -> rusqlite::Result<()> {
    let mut put = conn.prepare_cached(
        "INSERT OR REPLACE INTO strokes (seq, first, last, data) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (first, last, blob) in rows {
        put.execute(params![seq as i64, *first as i64, *last as i64, blob])?;
    }
    Ok(())
}

/// The history row, `(seq, data)`, if one was saved.
pub(crate) fn history_row(conn: &Connection) -> rusqlite::Result<Option<(i64, Vec<u8>)>> {
    conn.query_row("SELECT seq, data FROM history WHERE id = 1", [], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .optional()
}

/// [`history_row`], which must be saved at op `bake`.
///
/// # Errors
/// [`StoreError::CorruptHistory`] for a row saved at another op; SQLite failures.
fn history_row_at(conn: &Connection, bake: u64) -> Result<Option<(i64, Vec<u8>)>, StoreError> {
    let row = history_row(conn)?;
    if let Some((hseq, _)) = &row
        && *hseq as u64 != bake
    {
        return Err(StoreError::CorruptHistory(format!(
            "saved at op {hseq}, the bake covers op {bake}"
        )));
    }
    Ok(row)
}

/// The saved history of a world before format 4 (one blob) whose bake covers op `bake`, or an
/// empty one when none was saved.
///
/// # Errors
/// As [`load`].
pub(crate) fn load_whole(conn: &Connection, bake: u64) -> Result<History, StoreError> {
    match history_row_at(conn, bake)? {
        None => Ok(History::default()),
        Some((hseq, blob)) => decode_whole(hseq, &blob),
    }
}

/// The saved history of a format-4 world whose bake covers op `bake` (an empty history when
/// none was saved), its strokes as the file holds them (for the next bake to leave out), and
/// how many replaced versions of them the rows read hold.
///
/// # Errors
/// [`StoreError::CorruptHistory`]: a header saved at another op, a bad tag or encoding,
/// strokes that do not match the header; SQLite failures.
pub(crate) fn load(
    conn: &Connection,
    bake: u64,
) -> Result<(History, Arc<[SharedStroke]>, usize), StoreError> {
    let corrupt = |why: String| StoreError::CorruptHistory(why);
    let Some((hseq, blob)) = history_row_at(conn, bake)? else {
        return Ok((History::default(), Arc::from(Vec::new()), 0));
    };
    let payload = tag::open(&tag::key(&[hseq]), &blob)
        .ok_or_else(|| corrupt("header checksum mismatch".into()))?;
    let header: HistoryHeader =
        rmp_serde::from_slice(&decompress(payload)?).map_err(|e| corrupt(e.to_string()))?;
    let mut strokes: BTreeMap<u64, SharedStroke> = BTreeMap::new();
    let mut versions = 0;
    if let Some(first) = header.first {
        let mut stmt = conn.prepare(
            "SELECT seq, first, data FROM strokes WHERE seq <= ?1 AND last >= ?2 \
             ORDER BY seq, first",
        )?;
        let rows = stmt.query_map(params![bake as i64, first as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })?;
        // Rows in ascending `seq`: a later version of a stroke replaces the earlier.
        for row in rows {
            let (seq, row_first, blob) = row?;
            let payload = tag::open(&tag::key(&[seq, row_first]), &blob).ok_or_else(|| {
                corrupt(format!(
                    "strokes row ({seq}, {row_first}): checksum mismatch"
                ))
            })?;
            let batch = decode_row(&decompress(payload)?)
                .map_err(|e| corrupt(format!("strokes row ({seq}, {row_first}): {e}")))?;
            for s in batch.into_iter().filter(|s| s.id() >= first) {
                strokes.insert(s.id(), s);
                versions += 1;
            }
        }
    }
    let kept: Vec<SharedStroke> = strokes.into_values().collect();
    let history = History::from_parts(header, kept.clone()).map_err(|e| corrupt(e.to_string()))?;
    let stale = versions - kept.len();
    Ok((history, Arc::from(kept), stale))
}

/// A format-3 history blob (sealed zstd of the whole MessagePack history).
pub(crate) fn decode_whole(hseq: i64, blob: &[u8]) -> Result<History, StoreError> {
    let payload = tag::open(&tag::key(&[hseq]), blob)
        .ok_or_else(|| StoreError::CorruptHistory("checksum mismatch".into()))?;
    rmp_serde::from_slice(&decompress(payload)?)
        .map_err(|e| StoreError::CorruptHistory(e.to_string()))
}
