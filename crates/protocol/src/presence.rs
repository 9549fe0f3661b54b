//! Presence: who else is connected, where they are and where their tools aim.
//!
//! ```text
//! client                                        server
//!   Presence {position, aim {tool, point?, radius}} ──▶   (kept: the latest per client)
//!                                               ◀── Presence {players changed, left}
//!                                                   (at most every 100 ms, only changes,
//!                                                    never the client itself)
//! ```
//!
//! Presence is not ordered with the ops and never reaches the world file: it is the latest
//! state of each player, sent as it changes. Players are listed in id order.

use serde::{Deserialize, Serialize};

/// Longest tool name accepted, bytes.
pub const MAX_TOOL_BYTES: usize = 32;

/// Largest tool radius accepted, metres.
pub const MAX_AIM_RADIUS_M: f64 = 256.0;

/// Largest coordinate (absolute value) accepted for a position or an aim point, metres (as
/// for a viewer).
pub const MAX_COORD_M: f64 = 1e9;

/// Where a player's tool aims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aim {
    /// What the tool is, for display (e.g. `"ball"`, `"cube"`, `"blocks"`): at most
    /// [`MAX_TOOL_BYTES`] bytes.
    pub tool: String,
    /// The point it aims at, world metres; `None` when nothing is in reach.
    pub point: Option<[f64; 3]>,
    /// The tool's radius, metres, in `[0, MAX_AIM_RADIUS_M]`.
    pub radius: f64,
}

/// A client's presence report ([`crate::ClientMessage::Presence`]): where it is
/// and where its tool aims. The server keeps only the latest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresenceReport {
    /// The player's eye (camera) position, world metres.
    pub position: [f64; 3],
    /// The tool.
    pub aim: Aim,
}

/// Another player, as the server last heard of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Player {
    /// The player's client id.
    pub id: u64,
    /// The display name from their hello (at most 64 bytes).
    pub name: String,
    /// Where they are, world metres: their last presence report's position, or their
    /// viewer's position if that came later.
    pub position: [f64; 3],
    /// Their tool; `None` until they report one.
    pub aim: Option<Aim>,
}

/// What changed among the other players since the last update
/// ([`crate::ServerMessage::Presence`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresenceUpdate {
    /// Players that joined or changed, each as they are now, in id order.
    pub players: Vec<Player>,
    /// Ids of players that left, in id order.
    pub left: Vec<u64>,
}

/// A presence report the server (or the client, before sending) refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AimError {
    /// The position has a coordinate that is not finite or beyond [`MAX_COORD_M`].
    #[error("presence position {position:?} is not usable")]
    Position {
        /// The position, metres.
        position: [f64; 3],
    },
    /// The aim point has a coordinate that is not finite or beyond [`MAX_COORD_M`].
    #[error("aim point {point:?} is not usable")]
    Point {
        /// The point, metres.
        point: [f64; 3],
    },
    /// The radius is not in `[0, max]`.
    #[error("tool radius {} m is out of range [0, {max}]", loam_field::num(.radius))]
    Radius {
        /// The radius, metres.
        radius: f64,
        /// [`MAX_AIM_RADIUS_M`].
        max: f64,
    },
    /// The tool name is longer than [`MAX_TOOL_BYTES`].
    #[error("tool name of {bytes} bytes is over the limit of {max}")]
    ToolTooLong {
        /// Its length, bytes.
        bytes: usize,
        /// [`MAX_TOOL_BYTES`].
        max: usize,
    },
}

fn usable(p: &[f64; 3]) -> bool {
    p.iter().all(|c| c.is_finite() && c.abs() < MAX_COORD_M)
}

impl PresenceReport {
    /// Checks the numbers and sizes: finite coordinates under [`MAX_COORD_M`], a radius in
    /// `[0, MAX_AIM_RADIUS_M]`, a tool name of at most [`MAX_TOOL_BYTES`] bytes.
    ///
    /// # Errors
    /// The first [`AimError`] found.
    pub fn check(&self) -> Result<(), AimError> {
        if !usable(&self.position) {
            return Err(AimError::Position {
                position: self.position,
            });
        }
        let aim = &self.aim;
        if let Some(point) = aim.point
            && !usable(&point)
        {
            return Err(AimError::Point { point });
        }
        if !(aim.radius >= 0.0 && aim.radius <= MAX_AIM_RADIUS_M) {
            return Err(AimError::Radius {
                radius: aim.radius,
                max: MAX_AIM_RADIUS_M,
            });
        }
        if aim.tool.len() > MAX_TOOL_BYTES {
            return Err(AimError::ToolTooLong {
                bytes: aim.tool.len(),
                max: MAX_TOOL_BYTES,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> PresenceReport {
        PresenceReport {
            position: [1.0, 2.0, 3.0],
            aim: Aim {
                tool: "ball".into(),
                point: Some([4.0, 0.5, -2.0]),
                radius: 3.0,
            },
        }
    }

    #[test]
    fn check_refuses_bad_numbers_and_sizes() {
        assert_eq!(report().check(), Ok(()));
        let mut r = report();
        r.aim.point = None;
        assert_eq!(r.check(), Ok(()));
        let mut r = report();
        r.position[1] = f64::NAN;
        assert!(matches!(r.check(), Err(AimError::Position { .. })));
        let mut r = report();
        r.aim.point = Some([0.0, f64::INFINITY, 0.0]);
        assert!(matches!(r.check(), Err(AimError::Point { .. })));
        let mut r = report();
        r.aim.point = Some([2e9, 0.0, 0.0]);
        assert!(matches!(r.check(), Err(AimError::Point { .. })));
        for radius in [-1.0, f64::NAN, 257.0] {
            let mut r = report();
            r.aim.radius = radius;
            assert!(
                matches!(r.check(), Err(AimError::Radius { .. })),
                "{radius}"
            );
        }
        let mut r = report();
        r.aim.tool = "x".repeat(MAX_TOOL_BYTES + 1);
        assert_eq!(
            r.check(),
            Err(AimError::ToolTooLong {
                bytes: 33,
                max: MAX_TOOL_BYTES
            })
        );
    }
}
