//! The crate's one error type.

use crate::{BodyId, CharacterId};

/// What went wrong in a call to this crate. Every failing call leaves the world as it was.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PhysicsError {
    /// A mesh's index buffer does not hold whole triangles.
    #[error("the index buffer holds {len} indices, not a multiple of 3: pass three per triangle")]
    IndicesNotTriangles {
        /// Length of the index buffer.
        len: usize,
    },
    /// A triangle names a vertex that is not in the position buffer.
    #[error("triangle {triangle} names vertex {index}, but the mesh has {vertex_count} vertices")]
    IndexOutOfRange {
        /// Triangle number (index buffer offset / 3).
        triangle: usize,
        /// The offending vertex index.
        index: u32,
        /// Number of positions passed.
        vertex_count: usize,
    },
    /// A vertex position is NaN or infinite.
    #[error("vertex {vertex} has a non-finite position {position:?}")]
    NonFinitePosition {
        /// The vertex index.
        vertex: usize,
        /// Its position.
        position: [f32; 3],
    },
    /// More vertices than a `u32` index can address.
    #[error("the mesh has {count} vertices; a chunk mesh holds at most 2³² − 1")]
    TooManyVertices {
        /// Number of positions passed.
        count: usize,
    },
    /// An argument is NaN or infinite.
    #[error("{what} must be finite")]
    NonFinite {
        /// Which argument.
        what: &'static str,
    },
    /// An argument is finite but outside its allowed range.
    #[error("{what} = {value} is out of range: it must be {expected}")]
    OutOfRange {
        /// Which argument or setting.
        what: &'static str,
        /// The value passed.
        value: f32,
        /// The allowed range, in words.
        expected: &'static str,
    },
    /// No character with this id (never spawned, or removed).
    #[error("no character {0:?} in this world")]
    UnknownCharacter(CharacterId),
    /// No body with this id (never spawned here, or removed).
    #[error("no body {0:?} in this world")]
    UnknownBody(BodyId),
}

/// `Err(NonFinite)` unless every component is finite.
pub(crate) fn check_finite(what: &'static str, v: &[f32]) -> Result<(), PhysicsError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(PhysicsError::NonFinite { what })
    }
}

/// `Err(NonFinite)` or `Err(OutOfRange)` unless `value` is finite and `min < value` (or
/// `min <= value` when `inclusive`).
pub(crate) fn check_min(
    what: &'static str,
    value: f32,
    min: f32,
    inclusive: bool,
    expected: &'static str,
) -> Result<(), PhysicsError> {
    if !value.is_finite() {
        return Err(PhysicsError::NonFinite { what });
    }
    let ok = if inclusive { value >= min } else { value > min };
    if ok {
        Ok(())
    } else {
        Err(PhysicsError::OutOfRange {
            what,
            value,
            expected,
        })
    }
}
