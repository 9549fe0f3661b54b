//! What can go wrong for a client: connecting, keeping up, the server's data.

use loam_field::{EditError, SettingsError};

use crate::protocol::{AimError, BrickDecodeError, DecodeError, Refusal};

/// A client could not connect, keep up or take what the server sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A socket failed.
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
    /// A brick from the server did not decode.
    #[error("bad brick from the server")]
    Brick(#[from] BrickDecodeError),
    /// The server refused the handshake.
    #[error("the server refused the connection: {0}")]
    Refused(Refusal),
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
    /// A presence report was not sent: its numbers or sizes are out of range.
    #[error("presence not sent")]
    Aim(#[from] AimError),
    /// An undo or redo was not sent: own ops are still on their way to the server and back
    /// (their strokes are not known yet).
    #[error("{ops} own ops are not back from the server yet: undo or redo after them")]
    Unsettled {
        /// Own ops sent and not yet confirmed or refused.
        ops: usize,
    },
    /// A reconnect found another world at the server's address (different settings, or a
    /// world behind what this client saw): trying again will not help.
    #[error("{0}")]
    AnotherWorld(String),
    /// The client is not connected (dropped, or never connected).
    #[error("not connected")]
    NotConnected,
    /// The server closed the connection, with its reason.
    #[error("the server closed the connection: {reason}")]
    Disconnected {
        /// The server's reason (or what the transport said).
        reason: String,
    },
    /// The other side broke the protocol (an unexpected message, a wrong sequence number).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// Waiting for the other side took longer than allowed.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    /// A server op could not be applied to the client's confirmed field: the client no longer
    /// mirrors the server (a bug, or another generator).
    #[error("op {seq} from the server fails here")]
    Diverged {
        /// The op's sequence number.
        seq: u64,
        /// Why it failed.
        #[source]
        source: EditError,
    },
    /// A setting is out of range.
    #[error("bad setting `{name}`: {why}")]
    Config {
        /// The setting.
        name: &'static str,
        /// Why.
        why: String,
    },
}
