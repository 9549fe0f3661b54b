//! A world on NATS JetStream: one stream per world holds its genesis (generator, field
//! settings, the nodes' shared resume secret) and every op, in one order, and any number
//! of Loam nodes serve it (`loam serve --nats URL --world-id NAME`). docs/scale-out.md
//! says why the stream's sequence is the world's total order and what that costs.
//!
//! ```text
//!  clients ─ws─▶ node A ─publish (Nats-Msg-Id)─▶ stream LOAM_<world> ◀─publish─ node B ◀─ws─ clients
//!                  ▲          subjects loam.<world>.meta | loam.<world>.cell.<x>.<z>    │
//!                  └──────────── ordered consumer (every node reads every op) ─────────┘
//! ```
//!
//! - [`create_world`] (`loam world new --nats`) makes the stream and writes the genesis.
//! - A node ([`crate::ServerConfig::node`]) follows the stream into its own world file (its
//!   snapshot: the records and, in the same transaction, the stream position), so a restart
//!   replays only the tail; its clients' ops are published and applied when they come back.
//! - Now and then a node puts a copy of its world file into the world's object store
//!   (`snapshot.rs`); a node started without a world file starts from it and replays only
//!   the tail.
//! - [`export_world`] (`loam world export --nats`) replays the stream into a world file by
//!   the same rule ([`log::apply`]).
//! - Blocks: one node at a time, the holder of the world's block lease (`lease.rs`, a
//!   JetStream key-value bucket), decides them and publishes its outcomes as records; every
//!   node applies those by one rule ([`blocks::BlockReplica::apply`]).

pub mod blocks;
pub(crate) mod lease;
pub mod log;
pub(crate) mod node;
pub mod snapshot;
mod stream;

use std::path::{Path, PathBuf};
use std::time::Duration;

use loam_field::FieldSettings;
use serde::{Deserialize, Serialize};

pub use stream::{ExportSummary, WorldStream, create_world, export_world};

/// Where a node finds its world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// The NATS server, e.g. `nats://127.0.0.1:4222`, or several servers of a cluster
    /// separated by commas.
    pub nats_url: String,
    /// The world's id ([`log::valid_world_id`]).
    pub world_id: String,
    /// This node's number, 1 to 4095: the high bits of the client ids it gives out, so that
    /// ids from different nodes never collide.
    pub node_id: u16,
    /// How long to wait for NATS when connecting. Default 5 s.
    pub connect_timeout: Duration,
    /// How often the node copies its world file and puts the copy as the world's snapshot
    /// (`snapshot.rs`; only when ops came since the last copy), in `[1 s, 30 days]`;
    /// `None`: never. Default [`snapshot::SNAPSHOT_EVERY`]. A node with
    /// [`crate::ServerConfig::backups`] puts each backup instead, at the backups' interval.
    pub snapshot_every: Option<Duration>,
}

impl NodeConfig {
    /// `world_id` on the NATS server at `nats_url`, as node 1.
    pub fn new(nats_url: impl Into<String>, world_id: impl Into<String>) -> Self {
        Self {
            nats_url: nats_url.into(),
            world_id: world_id.into(),
            node_id: 1,
            connect_timeout: Duration::from_secs(5),
            snapshot_every: Some(snapshot::SNAPSHOT_EVERY),
        }
    }
}

/// Where a node started in the world's stream ([`crate::ServerHandle::node_start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeStart {
    /// The stream sequence its world file stood at: every message up to it was in the file
    /// (0: a new file, made from the genesis).
    pub file_seq: u64,
    /// The stream sequence of the world's snapshot its file was made from, if it was
    /// (`snapshot.rs`): the node had no file.
    pub from_snapshot: Option<u64>,
    /// The stream's last sequence at its start: it replays the messages after `file_seq`
    /// up to here before it has caught up.
    pub stream_last: u64,
}

/// What a world on the stream starts with: written once by [`create_world`], read by every
/// node and by [`export_world`]. JSON, in parts of at most [`GENESIS_PART`] bytes on the
/// subject `loam.<world>.meta` (the stream's first messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Genesis {
    /// `"loam-genesis"`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// The world's id.
    pub world_id: String,
    /// The generator's JSON, as a world file keeps it (a heightmap embedded).
    pub generator_json: String,
    /// The field settings.
    pub field: FieldSettings,
    /// The BLAKE3 of the heightmap, if the generator has one.
    pub heightmap_blake3: Option<String>,
    /// [`loam_protocol::interest::generator_fingerprint`], hex: a node whose build makes
    /// another generator from the same JSON refuses the world.
    pub fingerprint: String,
    /// The key of every node's resume keys, hex: a client resumes its id on any node.
    pub resume_secret: String,
}

impl Genesis {
    /// This world's tag, 16 hex digits: BLAKE3 of its id and resume secret, so a world made
    /// again under the same id has another. Node files carry it ([`log::Position`]).
    pub fn tag(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(self.world_id.as_bytes());
        h.update(&[0]);
        h.update(self.resume_secret.as_bytes());
        hex(&h.finalize().as_bytes()[..8])
    }
}

/// Bytes of the genesis per message (NATS' default largest payload is 1 MiB).
pub const GENESIS_PART: usize = 512 << 10;

/// Why a world on JetStream could not be made, opened, followed or exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// NATS did not answer.
    #[error("NATS at {url} is unreachable: {why}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// The client's error.
        why: String,
    },
    /// The world id cannot name a stream.
    #[error("world id {id:?} is not 1 to 64 ASCII letters, digits, `-` or `_`")]
    BadWorldId {
        /// The id given.
        id: String,
    },
    /// The node id is out of range.
    #[error("node id {id} is not from 1 to 4095")]
    BadNodeId {
        /// The id given.
        id: u16,
    },
    /// The NATS server has no JetStream.
    #[error(
        "NATS at {url} answers, but without JetStream: start nats-server with -js (and -sd \
         DIR for its storage)"
    )]
    NoJetStream {
        /// The URL given.
        url: String,
    },
    /// Another node serves the world with this node id (its lease is held: `lease.rs`).
    #[error(
        "node id {id} is in use by another node of this world (its lease did not lapse in \
         6 s); give each node its own --node-id"
    )]
    NodeIdInUse {
        /// The id given.
        id: u16,
    },
    /// No stream for the world (create it with `loam world new --nats`).
    #[error(
        "there is no world {world_id:?} on {url} (stream {stream}); `loam world new --nats` creates it"
    )]
    NoSuchWorld {
        /// The world id.
        world_id: String,
        /// The NATS URL.
        url: String,
        /// The stream looked for.
        stream: String,
    },
    /// The world exists already.
    #[error("world {world_id:?} already exists on {url} (stream {stream}, {messages} messages)")]
    WorldExists {
        /// The world id.
        world_id: String,
        /// The NATS URL.
        url: String,
        /// Its stream.
        stream: String,
        /// Messages it holds.
        messages: u64,
    },
    /// The stream's genesis is missing or unreadable: not a Loam world, or another world's.
    #[error("stream {stream} holds no readable genesis of world {world_id:?}: {why}")]
    Genesis {
        /// The stream.
        stream: String,
        /// The world id expected.
        world_id: String,
        /// Why.
        why: String,
    },
    /// This build makes another generator from the world's generator JSON.
    #[error(
        "this build's generator for world {world_id:?} has fingerprint {ours}, the world's is {theirs}"
    )]
    OtherGenerator {
        /// The world id.
        world_id: String,
        /// Ours, hex.
        ours: String,
        /// The genesis', hex.
        theirs: String,
    },
    /// The node's world file belongs to another world (another generator or settings), or
    /// is not a node's snapshot.
    #[error("world file {file:?} is not a snapshot of world {world_id:?}: {why}")]
    OtherSnapshot {
        /// The file.
        file: PathBuf,
        /// The world id.
        world_id: String,
        /// Why.
        why: String,
    },
    /// A JetStream request failed.
    #[error("JetStream: {what}: {why}")]
    JetStream {
        /// What was asked.
        what: &'static str,
        /// The client's error.
        why: String,
    },
    /// The export's world file failed.
    #[error("world file")]
    Store(#[from] loam_store::StoreError),
    /// The generator could not be built from the genesis' JSON.
    #[error("generator: {0}")]
    Generator(String),
    /// Field settings out of range.
    #[error("field settings")]
    Settings(#[from] loam_field::SettingsError),
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of lower-case or upper-case hex, `None` for anything else.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Checks `path` as a node's world file for `genesis` (same generator JSON and settings,
/// made by a node): `Ok(None)` if there is no file yet, else where it stands.
///
/// # Errors
/// [`ClusterError::OtherSnapshot`] for another world's file or a plain world file;
/// [`ClusterError::Store`] for one that does not open.
pub(crate) fn check_snapshot(
    path: &Path,
    genesis: &Genesis,
) -> Result<Option<log::Position>, ClusterError> {
    if !path.exists() {
        return Ok(None);
    }
    let store = loam_store::Store::open_read_only(path)?;
    let other = |why: String| ClusterError::OtherSnapshot {
        file: path.into(),
        world_id: genesis.world_id.clone(),
        why,
    };
    if store.generator_json()? != genesis.generator_json {
        return Err(other("its generator differs from the world's".into()));
    }
    if store.field_settings()? != genesis.field {
        return Err(other("its field settings differ from the world's".into()));
    }
    let Some(followed) = store.followed()? else {
        return Err(other(if store.last_seq() == 0 {
            "it is a plain world file, not a node's (remove it, or name another file)".into()
        } else {
            "it is a plain world file with ops, not a node's".into()
        }));
    };
    let at = log::Position::decode(&followed)
        .ok_or_else(|| other(format!("its stream position {followed:?} does not read")))?;
    if at.world != genesis.tag() {
        return Err(other(format!(
            "it follows the world tagged {}, this one is tagged {} (another world, or an \
             earlier world of the same id)",
            at.world,
            genesis.tag()
        )));
    }
    Ok(Some(at))
}
