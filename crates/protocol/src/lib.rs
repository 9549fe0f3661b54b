//! # loam-protocol
//!
//! Loam's wire protocol, apart from the server and the client that speak it, so that a
//! browser build (wasm32-unknown-unknown: no threads, sockets or clocks in here) and other
//! servers can speak it too. `loam-server` and `loam-client` re-export it as `protocol`.
//!
//! The wire protocol: MessagePack (serde, maps with named fields) over binary WebSocket
//! messages, one message per WebSocket message.
//!
//! ```text
//! client                                   server
//!   Hello {protocol, name, token, viewer, resume?} ──▶
//!                                          ◀── Welcome {client id, resume key, world, seq, resumed, last op id}
//!                                          ◀── [resume: Op … for the ops missed in the kept region]
//!                                          ◀── CatchUp {region, keep?, bricks nearest first, done} …
//!   Op {op id, entry} ──▶                   (ordered, appended durably, applied)
//!                                          ◀── Op {seq, author, op id, entry} (+ Patch {seq, samples})
//!                                          ◀── OpRefused {op id, reason}      (world unchanged)
//!   BlockOp {op id, op} ──▶                 (same order, same log, applied to the block world)
//!                                          ◀── BlockOp {seq, author, op id, step, op, delta}
//!                                          ◀── Blocks {seq, step, delta}  (collapses, falls
//!                                               coming to rest, breaks: after op seq)
//!                                          ◀── BlockCatchUp {region, keep?, delta, done} …
//!   Viewer {position, radius} ──▶           ◀── CatchUp … for the regions it moved into
//!   Hash {request, region?} ──▶             ◀── HashAt {request, seq, region} (taken here)
//!                                          ◀── … Hash {request, seq, region, hash, blocks}
//!   Presence {position, aim} ──▶            ◀── Presence {players changed, left}
//!                                               (others only, ≤ 10 Hz; see [`presence`])
//!                                          ◀── Seq {seq} (the log moved on, nothing for you)
//!                                          ◀── Disconnect {reason}, then the close frame
//! ```
//!
//! A handshake the server cannot accept is answered with [`ServerMessage::Refused`]: another
//! protocol version (the server reads the version from any hello-shaped map, so an older or
//! newer client still gets a clear refusal), a wrong token, a full server.
//!
//! Ops travel as [`loam_field::LogEntry`] records (the op log's own versioned codec): the
//! client sends one with its stroke and sequence number 0; the server's broadcast carries the
//! record as appended to the world store (its sequence number, the server's stroke id).
//!
//! Block ops travel as loam-blocks' versioned records ([`loam_blocks::BlockOp::encode`]).
//! The server alone decides what they and terrain digs make fall, where pieces come to rest
//! and what breaks: it sends the resulting records ([`loam_blocks::BlockDelta`]: held blocks
//! and pieces as they now are, positions and pieces gone), which a client applies without
//! deciding anything ([`loam_blocks::BlockWorld::apply_delta`]), so its block world equals
//! the server's bit for bit over its region ([`block_hash`]).
//!
//! Every decoder checks the size first ([`DecodeError::TooLarge`]), never allocates more than
//! the message holds, limits nesting, and refuses trailing bytes.

#![deny(missing_docs)]

pub mod blocks;
mod bricks;
pub mod interest;
pub mod presence;

pub use blocks::{block_hash, blocks_in, brick_of_block, brick_of_piece, delta_box};
pub use bricks::{
    BrickDecodeError, WireBrick, WireSamples, decode_brick, decode_samples, encode_brick,
    encode_samples,
};
pub use interest::generator_fingerprint;
pub use presence::{Aim, AimError, Player, PresenceReport, PresenceUpdate};

use loam_blocks::BlockDelta;
use loam_field::FieldSettings;
use serde::{Deserialize, Serialize};

/// The protocol version this build speaks. A hello with another version is refused with
/// [`RefusalCode::ProtocolVersion`]. Version 2 added blocks (block ops, block events, block
/// catch-ups, the block hash); version 3 added presence (a client's position and aim, the
/// other players); version 4 patches only the samples an op changed, not whole bricks;
/// version 5 sends a generator too large for one message in parts before the welcome
/// ([`ServerMessage::WorldPart`]); version 6 marks where a hash is taken
/// ([`ServerMessage::HashAt`]) and sends the hash when it is done, computed beside the
/// ordering of ops rather than in its way; version 7 gives each client a resume key
/// ([`Welcome::resume_key`]) that a resume must show to keep its id; version 8 tells
/// clients what the server cannot do for a while ([`ServerMessage::Notice`]).
pub const PROTOCOL_VERSION: u32 = 8;

/// The WebSocket path a Loam server takes connections on.
pub const WS_PATH: &str = "/ws";

/// Bytes a WebSocket reads from its socket at a time (both sides).
pub const READ_BUFFER: usize = 8 << 10;

/// Builds the world's generator from the generator JSON its file holds (the CLI's session
/// spec). A server calls it once when it opens the world; a client calls it with the JSON
/// the server sends ([`WorldMeta::generator_json`]). The error is the reason, for the
/// caller's own error type.
pub type GeneratorFactory =
    std::sync::Arc<dyn Fn(&str) -> Result<loam_field::Generator, String> + Send + Sync>;

/// Largest generator JSON a client takes in parts ([`ServerMessage::WorldPart`]), bytes
/// (2 GiB: a heightmap world carries its DEM, at most 2²⁸ samples of 4 bytes, in base64).
pub const MAX_GENERATOR_JSON_BYTES: usize = 1 << 31;

/// Largest [`ServerMessage::WorldPart`] the server sends, bytes (256 KiB, and at most a
/// quarter of its message limit).
pub const WORLD_PART_BYTES: usize = 256 << 10;

/// Default largest message either side accepts, bytes (1 MiB). A catch-up is split into
/// messages of at most half of the limit.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1 << 20;

/// Deepest MessagePack nesting a decoder follows (the messages need 11: a piece's block's
/// chisel shape inside a block op's delta).
const MAX_DEPTH: usize = 32;

/// A viewer: the centre of what a client looks at and how far it sees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Viewer {
    /// World position, metres.
    pub position: [f64; 3],
    /// View radius, metres (`≥ 0`, at most the server's `max_view_radius_m`). The server
    /// sends the ops and bricks of every region (brick) within this distance per axis, plus
    /// its margin.
    pub radius: f64,
}

/// An axis-aligned box of bricks (brick coordinates, both corners inclusive): a client's
/// region of interest, or the bricks an op may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrickBox {
    /// Lowest brick, inclusive.
    pub min: [i32; 3],
    /// Highest brick, inclusive.
    pub max: [i32; 3],
}

/// What a reconnecting client still holds: it resumes instead of taking a full snapshot
/// while the server still has the ops after `last_seq`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    /// The id the server gave this client before (its ops keep their author).
    pub client_id: u64,
    /// The [`Welcome::resume_key`] that came with that id. With another key (a forged
    /// one, or one from before the server restarted) the client joins under a new id, still
    /// resuming the data from `last_seq`, and the server does not know its last op id.
    pub key: [u64; 2],
    /// The last sequence number the client is up to date with.
    pub last_seq: u64,
    /// The region the client holds exactly as of `last_seq`.
    pub region: BrickBox,
}

/// The first message of a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the client.
    pub protocol: u32,
    /// A display name, not empty nor only white space (at most 64 bytes are kept).
    pub name: String,
    /// The server's token, if it asks for one.
    pub token: Option<String>,
    /// Where the client looks.
    pub viewer: Viewer,
    /// Set when reconnecting.
    pub resume: Option<Resume>,
}

/// A message from a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// The handshake; first and only once.
    Hello(Hello),
    /// An edit: a [`loam_field::LogEntry`] record (sequence number 0, the client's stroke).
    Op {
        /// The client's id for the op, increasing from one op to the next.
        op_id: u64,
        /// The record's bytes ([`loam_field::LogEntry::encode`]).
        #[serde(with = "serde_bytes")]
        entry: Vec<u8>,
    },
    /// A block op: a [`loam_blocks::BlockOp`] record, in the same order as terrain ops
    /// (and the same op id sequence).
    BlockOp {
        /// The client's id for the op, increasing from one op (of either kind) to the next.
        op_id: u64,
        /// The record's bytes ([`loam_blocks::BlockOp::encode`]).
        #[serde(with = "serde_bytes")]
        op: Vec<u8>,
    },
    /// The viewer moved.
    Viewer(Viewer),
    /// Asks for the server's field hash over `region` (every brick when `None`).
    Hash {
        /// Echoed in the answer.
        request: u64,
        /// Bricks to hash.
        region: Option<BrickBox>,
    },
    /// Where the player is and where their tool aims ([`PresenceReport::check`] must pass,
    /// or the server disconnects the client). Only the latest is kept.
    Presence(PresenceReport),
}

/// What the world is: enough for a client to build the same field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldMeta {
    /// The generator's JSON as the world file holds it.
    pub generator_json: String,
    /// Field settings.
    pub field: FieldSettings,
    /// BLAKE3 over the generator's values at fixed samples ([`generator_fingerprint`]):
    /// a client whose generator differs finds out at once.
    pub generator_fingerprint: [u8; 32],
}

/// The server's answer to an accepted hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Welcome {
    /// [`PROTOCOL_VERSION`] of the server.
    pub protocol: u32,
    /// The client's id (the author of its ops).
    pub client_id: u64,
    /// The key a reconnect shows to keep `client_id` ([`Resume::key`]): 128 bits only this
    /// client was sent, valid while this server process runs. Ids are public (presence
    /// lists them), so without it anyone could resume as another player.
    pub resume_key: [u64; 2],
    /// The world.
    pub world: WorldMeta,
    /// The current sequence number (the last op in the log).
    pub seq: u64,
    /// Whether the server resumes the client from its `last_seq` (ops follow) instead of
    /// sending a full snapshot of its region.
    pub resumed: bool,
    /// The last op id the server took from this client id (accepted or refused), if it knows:
    /// a reconnecting client sends again only its ops above it.
    pub last_op_id: Option<u64>,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RefusalCode {
    /// Another protocol version.
    ProtocolVersion,
    /// Missing or wrong token.
    Unauthorized,
    /// The server has its maximum number of clients.
    ServerFull,
    /// The first message was not a valid hello.
    BadHello,
}

/// A refused handshake; the server closes the connection after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// Why, as a code.
    pub code: RefusalCode,
    /// Why, in words.
    pub reason: String,
    /// [`PROTOCOL_VERSION`] of the server.
    pub server_protocol: u32,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.reason)
    }
}

/// Part of a snapshot: the client's region is now `region`, and these bricks are the
/// server's, as of `seq`. When `done`, every brick the client holds in `region` outside
/// `keep` that no part listed is the generator's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatchUp {
    /// The sequence number the bricks are at.
    pub seq: u64,
    /// The client's region from now on.
    pub region: BrickBox,
    /// The part of `region` the client already holds exactly (none: a full snapshot).
    pub keep: Option<BrickBox>,
    /// Bricks, nearest to the viewer first.
    pub bricks: Vec<WireBrick>,
    /// The last part.
    pub done: bool,
}

/// An ordered op, as broadcast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpRecord {
    /// Its sequence number.
    pub seq: u64,
    /// The author's client id.
    pub author: u64,
    /// The author's id for the op.
    pub op_id: u64,
    /// The log record as appended to the world store ([`loam_field::LogEntry`]).
    #[serde(with = "serde_bytes")]
    pub entry: Vec<u8>,
}

/// An ordered block op, as broadcast, with what it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockOpRecord {
    /// Its sequence number (one numbering with terrain ops).
    pub seq: u64,
    /// The author's client id (0: the server, e.g. a lump of terrain a dig cut loose).
    pub author: u64,
    /// The author's id for the op.
    pub op_id: u64,
    /// The physics step it was applied at, in the world file's numbering.
    pub step: u64,
    /// The op ([`loam_blocks::BlockOp::encode`]), as appended to the world store.
    #[serde(with = "serde_bytes")]
    pub op: Vec<u8>,
    /// The held blocks and pieces it changed, as they are after it.
    pub delta: BlockDelta,
}

/// What the block world did by itself after op `seq`: blocks that lost their support to a
/// terrain op, pieces that came to rest (with their final poses) or moved away, blocks
/// broken by impacts, pieces gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockEvents {
    /// The last op before them.
    pub seq: u64,
    /// The physics step they happened by, in the world file's numbering.
    pub step: u64,
    /// The records.
    pub delta: BlockDelta,
}

/// Part of a block snapshot of `region`: the held blocks (by their lowest corner) and
/// pieces (by their pose's position) the server has there, as of `seq`. When `done`, every
/// held block and piece the client holds in `region` outside `keep` that no part listed is
/// gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockCatchUp {
    /// The sequence number the records are at.
    pub seq: u64,
    /// The client's region from now on.
    pub region: BrickBox,
    /// The part of `region` the client already holds exactly (none: a full snapshot).
    pub keep: Option<BrickBox>,
    /// Held blocks and pieces (only `held` and `pieces` are used).
    pub delta: BlockDelta,
    /// The last part.
    pub done: bool,
}

/// What a [`ServerMessage::Notice`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The world's log is out of reach (a node lost NATS): ops are kept, unacknowledged,
    /// and applied when it is back.
    LogAway,
    /// The world's log is back: ops are acknowledged again.
    LogBack,
}

/// A [`ServerMessage::Notice`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Notice {
    /// What it is about.
    pub kind: NoticeKind,
    /// For the player, in English.
    pub text: String,
}

/// A message from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ServerMessage {
    /// The hello was accepted.
    Welcome(Welcome),
    /// The hello was refused; the connection closes.
    Refused(Refusal),
    /// Part of a snapshot or a region's catch-up.
    CatchUp(CatchUp),
    /// An op in the server's order.
    Op(OpRecord),
    /// The samples an op changed in the client's region, as they are after op `seq` (per
    /// brick, the op's changed box within it): sent right after that op when the client
    /// cannot reproduce it from what it holds (the op reads samples outside its region, or
    /// it is an undo or redo). The rest of each brick is as the client holds it.
    Patch {
        /// The op's sequence number.
        seq: u64,
        /// The changed samples, one box per brick.
        samples: Vec<WireSamples>,
    },
    /// A block op in the server's order.
    BlockOp(BlockOpRecord),
    /// Block events after an op.
    Blocks(BlockEvents),
    /// Part of the blocks of a snapshot or a region's catch-up (sent before its bricks).
    BlockCatchUp(BlockCatchUp),
    /// One of the client's ops (of either kind) was refused; the world is unchanged.
    OpRefused {
        /// The client's id for the op.
        op_id: u64,
        /// Why.
        reason: String,
    },
    /// The log is at `seq`; nothing before it is missing for this client.
    Seq {
        /// The sequence number.
        seq: u64,
    },
    /// Where in this stream the hash of `request` is taken: of the field after op `seq`, as
    /// the client holds it on reading this message. The [`ServerMessage::Hash`] follows
    /// when it is computed, possibly after later ops; the client keeps its own field as it
    /// was here (a cheap snapshot) to compare with it.
    HashAt {
        /// The request.
        request: u64,
        /// The sequence number the hash is at.
        seq: u64,
        /// The region hashed (every brick when `None`).
        region: Option<BrickBox>,
    },
    /// The server's field hash, after its [`ServerMessage::HashAt`].
    Hash {
        /// The request it answers.
        request: u64,
        /// The sequence number the hash is at.
        seq: u64,
        /// The region hashed (every brick when `None`).
        region: Option<BrickBox>,
        /// The hash ([`loam_field::FieldHash`]).
        hash: [u8; 32],
        /// The block world's hash over the same region ([`block_hash`]).
        blocks: [u8; 32],
    },
    /// Other players that joined, changed or left since the last presence update (at most
    /// one per 100 ms, none while nothing changed; the first lists everyone).
    Presence(PresenceUpdate),
    /// The server closes the connection, and why.
    Disconnect {
        /// Why.
        reason: String,
    },
    /// Something about the server the player should know, not ordered with the ops: sent
    /// when it happens, and to a client that joins while it holds.
    Notice(Notice),
    /// Part of the world's generator JSON ([`WorldMeta::generator_json`], UTF-8 bytes in
    /// order), sent before the welcome when the welcome would not fit a message (a
    /// heightmap world carries its DEM). The welcome's `generator_json` is then empty and
    /// the parts, joined, are it.
    WorldPart {
        /// The next bytes of the JSON.
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
}

/// A message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Longer than the limit (checked before decoding).
    #[error("message of {bytes} bytes is over the limit of {max}")]
    TooLarge {
        /// Its length.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// Not MessagePack, or not a message of this protocol.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A valid message followed by more bytes.
    #[error("{0} bytes after the message")]
    Trailing(usize),
}

fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(msg).expect("protocol messages always serialise")
}

/// Decodes one MessagePack value of at most `max` bytes that must use every byte.
fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8], max: usize) -> Result<T, DecodeError> {
    if bytes.len() > max {
        return Err(DecodeError::TooLarge {
            bytes: bytes.len(),
            max,
        });
    }
    let mut cursor = std::io::Cursor::new(bytes);
    let value = {
        let mut de = rmp_serde::Deserializer::new(&mut cursor);
        de.set_max_depth(MAX_DEPTH);
        T::deserialize(&mut de).map_err(|e| DecodeError::Malformed(e.to_string()))?
    };
    match bytes.len() - cursor.position() as usize {
        0 => Ok(value),
        n => Err(DecodeError::Trailing(n)),
    }
}

impl ClientMessage {
    /// MessagePack bytes.
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }

    /// Decodes a message of at most `max` bytes.
    ///
    /// # Errors
    /// [`DecodeError`]; never panics, whatever the bytes.
    pub fn decode(bytes: &[u8], max: usize) -> Result<Self, DecodeError> {
        decode(bytes, max)
    }
}

impl ServerMessage {
    /// MessagePack bytes.
    pub fn encode(&self) -> Vec<u8> {
        encode(self)
    }

    /// Decodes a message of at most `max` bytes.
    ///
    /// # Errors
    /// [`DecodeError`]; never panics, whatever the bytes.
    pub fn decode(bytes: &[u8], max: usize) -> Result<Self, DecodeError> {
        decode(bytes, max)
    }
}

#[derive(Deserialize)]
struct ProbeHello {
    protocol: u64,
}

#[derive(Deserialize)]
struct Probe {
    hello: ProbeHello,
}

/// The protocol version of a hello that does not decode as this version's hello: any map
/// `{"hello": {"protocol": N, …}}`, other fields ignored (so a client of another version is
/// told so instead of "malformed"). `None` if the bytes are not hello-shaped.
pub fn probe_hello_version(bytes: &[u8], max: usize) -> Option<u64> {
    if bytes.len() > max {
        return None;
    }
    let mut de = rmp_serde::Deserializer::new(std::io::Cursor::new(bytes));
    de.set_max_depth(MAX_DEPTH);
    Probe::deserialize(&mut de).ok().map(|p| p.hello.protocol)
}

impl BrickBox {
    /// Whether brick `k` lies in the box.
    pub fn contains(&self, k: [i32; 3]) -> bool {
        (0..3).all(|i| self.min[i] <= k[i] && k[i] <= self.max[i])
    }

    /// Whether `other` lies entirely in the box.
    pub fn contains_box(&self, other: &BrickBox) -> bool {
        self.contains(other.min) && self.contains(other.max)
    }

    /// The common part, if any.
    pub fn intersection(&self, other: &BrickBox) -> Option<BrickBox> {
        let min = [0, 1, 2].map(|i| self.min[i].max(other.min[i]));
        let max = [0, 1, 2].map(|i| self.max[i].min(other.max[i]));
        (0..3)
            .all(|i| min[i] <= max[i])
            .then_some(BrickBox { min, max })
    }

    /// Whether the boxes share a brick.
    pub fn intersects(&self, other: &BrickBox) -> bool {
        self.intersection(other).is_some()
    }

    /// Whether the box is well formed (`min ≤ max` on every axis).
    pub fn is_valid(&self) -> bool {
        (0..3).all(|i| self.min[i] <= self.max[i])
    }

    /// Bricks in the box (saturating).
    pub fn volume(&self) -> u64 {
        (0..3)
            .map(|i| (i64::from(self.max[i]) - i64::from(self.min[i]) + 1).max(0) as u64)
            .fold(1u64, u64::saturating_mul)
    }
}
