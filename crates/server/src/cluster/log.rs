//! The world's log on JetStream: subject names, the messages ops travel in, and the one
//! rule that applies a logged message to a replica (every node and `loam world export`
//! call [`apply`], so they number, stroke, refuse and skip alike).

use loam_field::{EditOp, EditOutcome, Field, Journal, LogEntry};
use loam_protocol::interest::op_reach;

/// Bricks along x and along z in one cell (the unit of a subject): 8 × 8 brick columns,
/// 256 m at 1 m voxels, all heights (docs/scale-out.md).
pub const CELL_BRICKS: i32 = 8;

/// The first bytes of every op message.
const MAGIC: &[u8; 4] = b"LOAM";
/// The layout's version (byte 4).
const VERSION: u8 = 1;
/// Bytes before the payload: magic, version, kind, author, op id.
const HEADER: usize = 4 + 1 + 1 + 8 + 8;

/// What an op message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A terrain op: a [`LogEntry`] record (sequence number 0, the author's stroke).
    Terrain = 1,
    /// A block op a client asked for ([`loam_blocks::BlockOp`] record): a request the
    /// world's block authority decides (`cluster/blocks.rs`).
    Block = 2,
    /// What the block authority decided or its physics changed
    /// ([`super::blocks::Outcome`], MessagePack), on the blocks subject.
    Outcome = 3,
    /// A node became the block authority (author: node id, op id: epoch, no record), on
    /// the blocks subject.
    Authority = 4,
    /// A lump of terrain cut loose ([`super::blocks::Cut`], MessagePack): removal ops for
    /// every field, a lump for the authority.
    Cut = 5,
}

/// One op on the stream: who sent it, their id for it, and its record.
///
/// Layout (little-endian): `b"LOAM"`, version `1`, kind, author `u64`, op id `u64`, then
/// the record's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpMessage {
    /// The kind of record.
    pub kind: Kind,
    /// The client id of the author (the same on every node: ids carry the node that gave
    /// them, and a resume key made from the world's secret keeps them across nodes).
    pub author: u64,
    /// The author's id for the op, increasing.
    pub op_id: u64,
    /// The record.
    pub record: Vec<u8>,
}

/// Why a message on the stream is not an op message. Every node meets the same bytes and
/// skips the message alike.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// Fewer bytes than the header.
    #[error("{len} bytes, fewer than the {HEADER}-byte header of an op message")]
    TooShort {
        /// Its length.
        len: usize,
    },
    /// Not starting with `LOAM`.
    #[error("it does not start with LOAM (first bytes {first:02x?})")]
    Magic {
        /// Its first four bytes.
        first: [u8; 4],
    },
    /// Another layout version.
    #[error("layout version {got}, this node reads version {VERSION}")]
    Version {
        /// The version it has.
        got: u8,
    },
    /// An unknown kind byte.
    #[error("unknown kind {got}")]
    Kind {
        /// The kind byte.
        got: u8,
    },
}

impl OpMessage {
    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(HEADER + self.record.len());
        v.extend_from_slice(MAGIC);
        v.push(VERSION);
        v.push(self.kind as u8);
        v.extend_from_slice(&self.author.to_le_bytes());
        v.extend_from_slice(&self.op_id.to_le_bytes());
        v.extend_from_slice(&self.record);
        v
    }

    /// Reads a message's bytes.
    ///
    /// # Errors
    /// [`MessageError`] when the header is not an op message's.
    pub fn decode(bytes: &[u8]) -> Result<Self, MessageError> {
        if bytes.len() < HEADER {
            return Err(MessageError::TooShort { len: bytes.len() });
        }
        if &bytes[..4] != MAGIC {
            return Err(MessageError::Magic {
                first: [bytes[0], bytes[1], bytes[2], bytes[3]],
            });
        }
        if bytes[4] != VERSION {
            return Err(MessageError::Version { got: bytes[4] });
        }
        let kind = match bytes[5] {
            1 => Kind::Terrain,
            2 => Kind::Block,
            3 => Kind::Outcome,
            4 => Kind::Authority,
            5 => Kind::Cut,
            got => return Err(MessageError::Kind { got }),
        };
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        Ok(Self {
            kind,
            author: word(6),
            op_id: word(14),
            record: bytes[HEADER..].to_vec(),
        })
    }

    /// The `Nats-Msg-Id` of a client's op (terrain or block): JetStream takes a message with an id it has seen within
    /// the stream's duplicate window once, so an op a client sends again (after a
    /// reconnect, to any node) is logged once.
    pub fn msg_id(&self) -> String {
        format!("{}-{}", self.author, self.op_id)
    }
}

/// A world id: 1 to 64 ASCII letters, digits, `-` or `_` (it becomes part of a stream
/// name and of subjects, which must not hold `.`, `*`, `>` or white space).
pub fn valid_world_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The names of one world on JetStream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// The world id.
    pub world: String,
}

impl Names {
    /// The stream: `LOAM_<world>`.
    pub fn stream(&self) -> String {
        format!("LOAM_{}", self.world)
    }
    /// Every subject of the world: `loam.<world>.>`.
    pub fn all(&self) -> String {
        format!("loam.{}.>", self.world)
    }
    /// The subject of a block op's request: the cell of the block it acts on
    /// (`loam.<world>.cell.<x>.<z>`), or `loam.<world>.cell.any` for an op on a piece or
    /// a lump.
    pub fn block_subject(&self, op: &loam_blocks::BlockOp, voxel_size: f64) -> String {
        use loam_blocks::BlockOp;
        match op {
            // The brick of the block by the one conversion of block positions to bricks
            // (the protocol's, with the field's rounding rule), then its cell.
            BlockOp::Place { at, .. } | BlockOp::Break { at } | BlockOp::Chisel { at, .. } => {
                let b = loam_protocol::blocks::brick_of_block(*at, voxel_size);
                format!(
                    "loam.{}.cell.{}.{}",
                    self.world,
                    b[0].div_euclid(CELL_BRICKS),
                    b[2].div_euclid(CELL_BRICKS)
                )
            }
            BlockOp::BreakOff { .. } | BlockOp::Lump { .. } => {
                format!("loam.{}.cell.any", self.world)
            }
        }
    }
    /// The world's lease bucket (a key-value bucket): `LOAM_<world>_LEASE`.
    pub fn lease_bucket(&self) -> String {
        format!("LOAM_{}_LEASE", self.world)
    }
    /// The world's snapshot store (an object store): `LOAM_<world>_SNAP`.
    pub fn snapshot_bucket(&self) -> String {
        format!("LOAM_{}_SNAP", self.world)
    }
    /// The block authority's announcements and outcomes: `loam.<world>.blocks` (a node
    /// that restarts reads these alone to rebuild its blocks).
    pub fn blocks(&self) -> String {
        format!("loam.{}.blocks", self.world)
    }
    /// The world's genesis (generator, field settings, secret): `loam.<world>.meta`.
    pub fn meta(&self) -> String {
        format!("loam.{}.meta", self.world)
    }
    /// The subject of an op: the cell `(x, z)` of its reach's lowest brick,
    /// `loam.<world>.cell.<x>.<z>`; an undo or redo (whose reach is its stroke's, known
    /// from the history) goes to `loam.<world>.cell.any`. Subjects group the log by place
    /// (for per-cell consumers and for reading); the order is the stream's.
    pub fn op_subject(&self, op: &EditOp, settings: &loam_field::FieldSettings) -> String {
        match op_reach(op, settings) {
            Some(r) => format!(
                "loam.{}.cell.{}.{}",
                self.world,
                r.min[0].div_euclid(CELL_BRICKS),
                r.min[2].div_euclid(CELL_BRICKS)
            ),
            None => format!("loam.{}.cell.any", self.world),
        }
    }
}

/// What [`apply`] made of a logged message.
#[derive(Debug)]
pub enum Applied {
    /// A terrain op the journal applied and numbered.
    Accepted {
        /// Its author and their op id.
        author: u64,
        /// The author's op id.
        op_id: u64,
        /// The numbered log entry.
        entry: LogEntry,
        /// What it changed.
        outcome: EditOutcome,
    },
    /// An op the field refused (nothing changed): the same refusal on every node.
    Refused {
        /// Its author.
        author: u64,
        /// The author's op id.
        op_id: u64,
        /// The field's reason.
        reason: String,
    },
    /// A lump of terrain cut loose: its removal ops, applied as one stroke of the journal
    /// (author 0), and the lump for the block authority.
    Cut {
        /// The removal ops applied, numbered, with what each changed.
        removed: Vec<(LogEntry, EditOutcome)>,
        /// The lump ([`loam_blocks::BlockOp::Lump`], encoded).
        lump: Vec<u8>,
    },
    /// A message of the blocks ([`super::blocks::BlockReplica::apply`]'s): nothing for the
    /// field.
    Blocks(OpMessage),
    /// Not an op this rule applies (corrupt): skipped by every node alike, with the reason
    /// logged.
    Skipped {
        /// Why.
        why: String,
    },
}

/// Applies one message of the world's log to a replica (`journal` and `field`), the same
/// on every node: a terrain op through the journal (numbered, stroked, with the undo rule),
/// a refusal when the field refuses it, a skip when the bytes are not an op. Depends only
/// on the message and the replica's state, never on which node runs it or when.
pub fn apply(journal: &mut Journal, field: &mut Field, bytes: &[u8]) -> Applied {
    let m = match OpMessage::decode(bytes) {
        Ok(m) => m,
        Err(e) => {
            return Applied::Skipped {
                why: format!("not an op message: {e}"),
            };
        }
    };
    match m.kind {
        Kind::Terrain => {}
        Kind::Cut => return apply_cut(journal, field, &m.record),
        Kind::Block | Kind::Outcome | Kind::Authority => return Applied::Blocks(m),
    }
    let entry = match LogEntry::decode(&m.record) {
        Ok(e) => e,
        Err(e) => {
            return Applied::Refused {
                author: m.author,
                op_id: m.op_id,
                reason: format!("the op does not decode: {e}"),
            };
        }
    };
    match journal.apply_for(field, m.author, entry.stroke, &entry.op) {
        Ok((entry, outcome)) => Applied::Accepted {
            author: m.author,
            op_id: m.op_id,
            entry,
            outcome,
        },
        Err(e) => Applied::Refused {
            author: m.author,
            op_id: m.op_id,
            reason: e.to_string(),
        },
    }
}

/// The field's side of a cut: its removal ops as one new stroke of the journal
/// ([`apply_server_stroke`], as the single server removes a lump).
fn apply_cut(journal: &mut Journal, field: &mut Field, record: &[u8]) -> Applied {
    let cut: super::blocks::Cut = match rmp_serde::from_slice(record) {
        Ok(c) => c,
        Err(e) => {
            return Applied::Skipped {
                why: format!("a cut that does not decode: {e}"),
            };
        }
    };
    let mut ops = Vec::with_capacity(cut.removals.len());
    for r in &cut.removals {
        match LogEntry::decode(r) {
            Ok(e) => ops.push(e.op),
            Err(e) => {
                return Applied::Skipped {
                    why: format!("a cut whose removal op does not decode: {e}"),
                };
            }
        }
    }
    Applied::Cut {
        removed: apply_server_stroke(journal, field, &ops),
        lump: cut.lump,
    }
}

/// Ops the server makes itself (a lump's removal) applied as one new stroke of the
/// journal, closed after them, so that a client's next op starts a stroke of its own: the
/// ops applied, numbered, with what each changed. An op the field refuses (nothing left
/// there) changes nothing and is left out. The single server (`lumps.rs`) and every node
/// ([`apply`]'s cut) call this.
pub fn apply_server_stroke(
    journal: &mut Journal,
    field: &mut Field,
    ops: &[EditOp],
) -> Vec<(LogEntry, EditOutcome)> {
    let stroke = journal.next_stroke();
    let mut done = Vec::with_capacity(ops.len());
    for op in ops {
        if let Ok(d) = journal.apply(field, stroke, op) {
            done.push(d);
        }
    }
    journal.close_stroke();
    done
}

/// Where a replica stands in the world's log: which world (its [`Genesis::tag`]), the last
/// stream sequence it applied and the journal's open stroke, saved with the records
/// ([`loam_store::Store::append_records_followed`]) as `"<tag> <seq>"` or
/// `"<tag> <seq> <author> <their stroke> <journal stroke>"`.
///
/// [`Genesis::tag`]: super::Genesis::tag
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Position {
    /// The world's tag: a file of another world, or of an earlier world of the same id, is
    /// told apart by it.
    pub world: String,
    /// The last stream sequence applied (0: none).
    pub seq: u64,
    /// [`Journal::open_stroke`] after it.
    pub open: Option<(u64, u64, u64)>,
}

impl Position {
    /// The text saved in the world file.
    pub fn encode(&self) -> String {
        match self.open {
            None => format!("{} {}", self.world, self.seq),
            Some((a, t, j)) => format!("{} {} {a} {t} {j}", self.world, self.seq),
        }
    }

    /// Reads [`Position::encode`]'s text; `None` if it is not that.
    pub fn decode(s: &str) -> Option<Self> {
        let (world, rest) = s.split_once(' ')?;
        if world.is_empty() || !world.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let n: Vec<u64> = rest
            .split(' ')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let world = world.to_string();
        match n[..] {
            [seq] => Some(Self {
                world,
                seq,
                open: None,
            }),
            [seq, a, t, j] => Some(Self {
                world,
                seq,
                open: Some((a, t, j)),
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_messages_round_trip_and_bad_headers_are_named() {
        let m = OpMessage {
            kind: Kind::Terrain,
            author: (7 << 52) | 12345,
            op_id: 42,
            record: vec![1, 2, 3],
        };
        let b = m.encode();
        assert_eq!(b.len(), HEADER + 3);
        assert_eq!(OpMessage::decode(&b).unwrap(), m);
        assert_eq!(m.msg_id(), format!("{}-42", (7u64 << 52) | 12345));
        assert_eq!(
            OpMessage::decode(&b[..10]),
            Err(MessageError::TooShort { len: 10 })
        );
        let mut bad = b.clone();
        bad[0] = b'X';
        assert!(matches!(
            OpMessage::decode(&bad),
            Err(MessageError::Magic { .. })
        ));
        let mut bad = b.clone();
        bad[4] = 9;
        assert_eq!(
            OpMessage::decode(&bad),
            Err(MessageError::Version { got: 9 })
        );
        let mut bad = b;
        bad[5] = 0;
        assert_eq!(OpMessage::decode(&bad), Err(MessageError::Kind { got: 0 }));
    }

    #[test]
    fn positions_round_trip() {
        for p in [
            Position {
                world: "00ff".into(),
                seq: 0,
                open: None,
            },
            Position {
                world: "1a2b3c4d5e6f7081".into(),
                seq: 99,
                open: Some((1 << 60, 3, 17)),
            },
        ] {
            assert_eq!(Position::decode(&p.encode()), Some(p));
        }
        for bad in ["", "7", "ab 1 2", "ab x", "zz 1", " 1"] {
            assert_eq!(Position::decode(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn block_requests_go_to_the_cell_of_their_block() {
        use loam_blocks::{BlockOp, BlockPos, BlockSize, PieceId};
        let names = Names { world: "w".into() };
        let at = |x, z| BlockOp::Break {
            at: BlockPos::new(BlockSize::Full, [x, 0, z]).unwrap(),
        };
        assert_eq!(names.block_subject(&at(-1, 0), 1.0), "loam.w.cell.-1.0");
        assert_eq!(names.block_subject(&at(0, 0), 1.0), "loam.w.cell.0.0");
        assert_eq!(names.block_subject(&at(0, -1), 1.0), "loam.w.cell.0.-1");
        let off = BlockOp::BreakOff {
            piece: PieceId(3),
            block: loam_blocks::BlockId(1),
        };
        assert_eq!(names.block_subject(&off, 1.0), "loam.w.cell.any");
    }

    #[test]
    fn world_ids() {
        assert!(valid_world_id("demo_1-a"));
        for bad in ["", "a.b", "a b", "a>", "*", &"x".repeat(65)] {
            assert!(!valid_world_id(bad), "{bad:?}");
        }
    }
}
