//! What can go wrong for a server: starting, its world file, running.

use loam_field::{EditError, SettingsError};
use loam_store::StoreError;

use crate::protocol::DecodeError;

/// A server could not start or keep running.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The world file failed (open, load, append, bake).
    #[error("world store")]
    Store(#[from] StoreError),
    /// Binding or accepting a socket failed.
    #[error("socket")]
    Io(#[from] std::io::Error),
    /// A block op or block record failed (decoding, restoring or replaying the blocks).
    #[error("blocks")]
    Blocks(#[from] loam_blocks::BlockError),
    /// The WebSocket layer failed (connect, send, receive).
    #[error("WebSocket: {0}")]
    WebSocket(String),
    /// A message from the other side did not decode.
    #[error("bad message from the other side")]
    Decode(#[from] DecodeError),
    /// The world's generator could not be built from its JSON, or the client's differs from
    /// the server's.
    #[error("generator: {0}")]
    Generator(String),
    /// The world's field settings are out of range.
    #[error("field settings")]
    Settings(#[from] SettingsError),
    /// The op was rejected by the local field before it was sent (nothing was sent).
    #[error("op rejected")]
    Edit(#[from] EditError),
    /// The other side broke the protocol (an unexpected message, a wrong sequence number).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The server's ordering task has stopped (shut down, or its store failed).
    #[error("the server stopped: {0}")]
    ServerStopped(String),
    /// The world's stream on NATS JetStream (a node): unreachable, missing, another
    /// world's, or this node's world file is not a snapshot of it.
    #[error("world on NATS JetStream")]
    Cluster(#[from] crate::cluster::ClusterError),
    /// A setting is out of range.
    #[error("bad setting `{name}`: {why}")]
    Config {
        /// The setting.
        name: &'static str,
        /// Why.
        why: String,
    },
}

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
