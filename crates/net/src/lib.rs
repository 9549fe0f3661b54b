//! # loam-net
//!
//! Multiplayer for Loam: an authoritative server that orders everyone's edits, a client that
//! predicts its own, and the wire protocol between them (MessagePack over WebSocket).
//!
//! - [`protocol`]: the messages, [`PROTOCOL_VERSION`], decoders that never panic (the crate
//!   `loam-protocol`, re-exported; it builds for wasm32).
//! - [`serve`]: the server (tokio + axum). One thread owns the world store and the field:
//!   ops are validated by loam-field, numbered, appended durably (a group per transaction),
//!   applied, and only then broadcast, to the clients whose region they change.
//! - [`Client`]: connects, takes a snapshot of its region, applies its own ops at once and
//!   re-applies them over the server's order when it differs; reconnects resuming from its
//!   last sequence number.
//! - [`bench_net`]: N real clients against a server, one JSON line of figures.
//! - [`disable_transparent_huge_pages`]: what `loam serve` and `loam bench-net` do first, for
//!   their latency.
//! - [`interest`]: regions (bricks) around viewers; which bricks an op may read.
//! - Blocks: block ops go through the same order and log as terrain ops; the server steps
//!   one loam-physics world and decides what falls, breaks and where rubble rests, and
//!   sends the resulting records; a client mirrors them ([`Client::blocks`],
//!   [`Client::send_block_op`]) and its block world hashes like the server's
//!   ([`block_hash`]) over its region.
//! - Presence: a client reports where it is and where its tool aims
//!   ([`Client::set_presence`]); the server sends every client the others' names, positions
//!   and aims as they change, at most ten times a second, and who left ([`Client::players`]).
//! - Undo over the network: [`Client::undo`] / [`Client::redo`] take back and bring back the
//!   client's own strokes through the server's order and history.
//!
//! Determinism: every map that reaches the field or the wire is a `BTreeMap`; the field computes
//! the same bits on every machine (docs/architecture.md), so a client that applies the same ops in
//! the same order over the same bricks holds the same bricks as the server.
//!
//! ```no_run
//! # async fn run() -> Result<(), loam_net::NetError> {
//! use std::sync::Arc;
//! use loam_field::{CaveSettings, Generator, NoiseTerrainSettings};
//! use loam_net::{Client, ClientConfig, GeneratorFactory, ServerConfig, Viewer, serve};
//!
//! let generator: GeneratorFactory = Arc::new(|_json: &str| {
//!     Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
//!         .map_err(|e| e.to_string())
//! });
//! let server = serve(ServerConfig::new("world.loam", generator.clone())).await?;
//! let viewer = Viewer { position: [0.0, 16.0, 0.0], radius: 64.0 };
//! let mut client = Client::connect(ClientConfig::new(server.url(), viewer, generator)).await?;
//! println!("field-hash: {}", client.field().hash());
//! server.shutdown().await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod bench;
mod blocks;
mod client;
mod error;
pub mod interest;
mod process;
mod server;

pub use bench::{BenchConfig, BenchReport, Diverged, bench_net};
pub use blocks::{block_hash, blocks_in, brick_of_block, brick_of_piece, delta_box};
pub use client::{Client, ClientConfig, ClientEvent, SyncReport};
pub use error::NetError;
pub use interest::generator_fingerprint;
pub use loam_protocol as protocol;
pub use process::disable_transparent_huge_pages;
pub use protocol::{
    Aim, BrickBox, DEFAULT_MAX_MESSAGE_BYTES, PROTOCOL_VERSION, Player, PresenceReport, Viewer,
};
pub use server::{
    BackupPlan, GeneratorFactory, GroundWork, Limits, Percentiles, ServerConfig, ServerHandle,
    ServerLatency, ServerStatus, WS_PATH, serve,
};

/// An error with its causes, `a: b: c` (for logs and for `loam bench-net`'s JSON line).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
