//! The op log's record: an op with its sequence number and stroke, versioned, as MessagePack
//! (what the store and the network carry).

use serde::{Deserialize, Serialize};

use super::EditOp;

/// The record version this build writes and the newest it reads.
pub const LOG_VERSION: u32 = 1;

/// One entry of the op log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogEntry {
    /// Record version ([`LOG_VERSION`]).
    pub v: u32,
    /// Sequence number: the op's place in the log, from 1, increasing by 1.
    pub seq: u64,
    /// The stroke the op belongs to (undo and redo name theirs in the op).
    pub stroke: u64,
    /// The op.
    pub op: EditOp,
}

/// A log record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not MessagePack, or not a map with `v`.
    #[error("not an op record: {0}")]
    Malformed(String),
    /// Written by a newer build.
    #[error("op record version {found} is newer than this build reads ({max})")]
    NewerVersion {
        /// The version found.
        found: u64,
        /// [`LOG_VERSION`].
        max: u32,
    },
    /// An op kind this build does not know.
    #[error("unknown op kind {0:?}")]
    UnknownKind(String),
    /// A known kind with missing, unknown or mistyped fields.
    #[error("invalid op record: {0}")]
    Invalid(String),
}

#[derive(Deserialize)]
struct Head {
    v: u64,
    op: Kind,
}

#[derive(Deserialize)]
struct Kind {
    kind: String,
}

impl LogEntry {
    /// A record of the current version.
    pub fn new(seq: u64, stroke: u64, op: EditOp) -> Self {
        Self {
            v: LOG_VERSION,
            seq,
            stroke,
            op,
        }
    }

    /// MessagePack bytes (a map with named fields).
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec_named(self).expect("an op record always serialises")
    }

    /// Decodes a record. The numbers are not checked here (that is the field's job when the
    /// op is applied).
    ///
    /// # Errors
    /// [`DecodeError`]: malformed bytes, a newer version, an unknown kind, bad fields.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        // The whole record first: a record that decodes has a head too, so only a failure
        // reads the head again to say what is wrong (the order of the checks below).
        if let Ok(entry) = whole::<Self>(bytes) {
            return match entry.v {
                0 => Err(DecodeError::Malformed("record version 0".into())),
                v if v > LOG_VERSION => Err(DecodeError::NewerVersion {
                    found: v.into(),
                    max: LOG_VERSION,
                }),
                _ => Ok(entry),
            };
        }
        let head: Head = whole(bytes).map_err(DecodeError::Malformed)?;
        if head.v == 0 {
            return Err(DecodeError::Malformed("record version 0".into()));
        }
        if head.v > u64::from(LOG_VERSION) {
            return Err(DecodeError::NewerVersion {
                found: head.v,
                max: LOG_VERSION,
            });
        }
        if !EditOp::KINDS.contains(&head.op.kind.as_str()) {
            return Err(DecodeError::UnknownKind(head.op.kind));
        }
        whole(bytes).map_err(DecodeError::Invalid)
    }
}

/// Decodes one MessagePack value that must use every byte (trailing bytes are an error, not a
/// second record silently dropped).
fn whole<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let mut cursor = std::io::Cursor::new(bytes);
    let value = {
        let mut de = rmp_serde::Deserializer::new(&mut cursor);
        T::deserialize(&mut de).map_err(|e| e.to_string())?
    };
    let used = cursor.position() as usize;
    if used == bytes.len() {
        Ok(value)
    } else {
        Err(format!("{} bytes after the record", bytes.len() - used))
    }
}
