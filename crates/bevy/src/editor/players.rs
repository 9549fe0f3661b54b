//! The other players of a joined editor ([`super::remote`]): a marker where each one is and
//! a translucent sphere of their tool's radius where it aims, following the presence the
//! client thread reports; and this player's own presence, sent when it changes.
//!
//! ```text
//!   camera + aim ─ PresenceTracker (≤ 10 Hz, changes only) ─ RemoteCommand::Presence ─▶
//!   RemoteStatus::players ─▶ show_players ─▶ PlayerMarker { body, tool } entities
//! ```

use std::time::Duration;

use loam_world::Instant;

use bevy::prelude::*;

use loam_protocol::{Aim, Player};

use super::remote::{Remote, RemoteCommand};

/// Shortest time between two presence reports (the server sends others at most ten
/// updates a second anyway).
pub const PRESENCE_EVERY: Duration = Duration::from_millis(100);

/// How far the position or aim point moves before it is reported again, metres.
pub const PRESENCE_MOVE_M: f64 = 0.1;

/// Radius of the marker where another player is, metres.
pub const BODY_RADIUS_M: f32 = 0.6;

/// This player's presence as last sent, and when.
#[derive(Debug, Clone, Default)]
pub struct PresenceTracker {
    sent: Option<(Instant, [f64; 3], Aim)>,
}

fn moved(a: Option<[f64; 3]>, b: Option<[f64; 3]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (0..3).any(|i| (a[i] - b[i]).abs() > PRESENCE_MOVE_M),
        (None, None) => false,
        _ => true,
    }
}

impl PresenceTracker {
    /// The presence command to send at `now` for a player at `position` (metres) aiming
    /// `aim`, if it is due: something changed (the tool or radius, or the position or aim
    /// point by more than [`PRESENCE_MOVE_M`]) and [`PRESENCE_EVERY`] has passed since the
    /// last one. Non-finite numbers are never reported.
    pub fn due(&mut self, now: Instant, position: [f64; 3], aim: Aim) -> Option<RemoteCommand> {
        let finite = |p: &[f64; 3]| p.iter().all(|c| c.is_finite());
        if !finite(&position) || !aim.point.as_ref().is_none_or(finite) || !aim.radius.is_finite() {
            return None;
        }
        if let Some((at, p, a)) = &self.sent {
            let changed = a.tool != aim.tool
                || a.radius != aim.radius
                || moved(Some(*p), Some(position))
                || moved(a.point, aim.point);
            if !changed || now.duration_since(*at) < PRESENCE_EVERY {
                return None;
            }
        }
        self.sent = Some((now, position, aim.clone()));
        Some(RemoteCommand::Presence { position, aim })
    }
}

/// Marks the entities that show another player.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PlayerMarker {
    /// Where the player (their camera) is.
    Body(u64),
    /// Their tool: a sphere of its radius at the point it aims at.
    Tool(u64),
}

impl PlayerMarker {
    /// The player's client id.
    pub fn id(self) -> u64 {
        match self {
            PlayerMarker::Body(id) | PlayerMarker::Tool(id) => id,
        }
    }
}

/// The mesh and materials of the markers, made on first use.
#[derive(Resource, Clone)]
pub struct PlayerLook {
    sphere: Handle<Mesh>,
    body: Handle<StandardMaterial>,
    tool: Handle<StandardMaterial>,
}

fn marker_transform(marker: PlayerMarker, p: &Player) -> Option<Transform> {
    let at = |v: [f64; 3]| Vec3::from_array(v.map(|c| c as f32));
    match marker {
        PlayerMarker::Body(_) => {
            Some(Transform::from_translation(at(p.position)).with_scale(Vec3::splat(BODY_RADIUS_M)))
        }
        PlayerMarker::Tool(_) => {
            let aim = p.aim.as_ref()?;
            let point = aim.point?;
            Some(
                Transform::from_translation(at(point))
                    .with_scale(Vec3::splat(aim.radius.max(0.1) as f32)),
            )
        }
    }
}

/// Keeps one body marker and one tool sphere per other player in [`Remote`]'s status:
/// spawned when a player appears, moved as they move and aim (the tool sphere hidden while
/// they aim at nothing), despawned when they leave. Does nothing without a [`Remote`].
pub fn show_players(
    mut commands: Commands,
    remote: Option<Res<Remote>>,
    look: Option<Res<PlayerLook>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut shown: Query<(Entity, &PlayerMarker, &mut Transform, &mut Visibility)>,
) {
    let Some(remote) = remote else {
        return;
    };
    let players = &remote.status.players;
    let find = |id: u64| players.iter().find(|p| p.id == id);
    let mut have = std::collections::BTreeSet::new();
    for (entity, &marker, mut t, mut vis) in &mut shown {
        let Some(p) = find(marker.id()) else {
            commands.entity(entity).despawn();
            continue;
        };
        have.insert(marker);
        match marker_transform(marker, p) {
            Some(new) => {
                *t = new;
                *vis = Visibility::Visible;
            }
            None => *vis = Visibility::Hidden,
        }
    }
    if players
        .iter()
        .all(|p| have.contains(&PlayerMarker::Body(p.id)))
    {
        return;
    }
    let look = match look {
        Some(l) => l.clone(),
        None => {
            let l = PlayerLook {
                sphere: meshes.add(Sphere::new(1.0).mesh().ico(2).expect("an ico sphere")),
                body: materials.add(StandardMaterial {
                    base_color: Color::srgb(0.2, 0.6, 1.0),
                    unlit: true,
                    ..Default::default()
                }),
                tool: materials.add(StandardMaterial {
                    base_color: Color::srgba(0.3, 0.7, 1.0, 0.25),
                    alpha_mode: AlphaMode::Blend,
                    unlit: true,
                    ..Default::default()
                }),
            };
            commands.insert_resource(l.clone());
            l
        }
    };
    for p in players {
        for marker in [PlayerMarker::Body(p.id), PlayerMarker::Tool(p.id)] {
            if have.contains(&marker) {
                continue;
            }
            let material = match marker {
                PlayerMarker::Body(_) => look.body.clone(),
                PlayerMarker::Tool(_) => look.tool.clone(),
            };
            let (t, vis) = match marker_transform(marker, p) {
                Some(t) => (t, Visibility::Visible),
                None => (Transform::default(), Visibility::Hidden),
            };
            commands.spawn((
                Mesh3d(look.sphere.clone()),
                MeshMaterial3d(material),
                t,
                vis,
                marker,
            ));
        }
    }
}

/// The HUD's lines for the other players, nearest first: name, id, distance from `camera`
/// (metres) and tool.
pub fn player_lines(players: &[Player], camera: Vec3) -> Vec<String> {
    let dist = |p: &Player| {
        let v = Vec3::from_array(p.position.map(|c| c as f32));
        v.distance(camera)
    };
    let mut by_distance: Vec<(f32, &Player)> = players.iter().map(|p| (dist(p), p)).collect();
    by_distance.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id.cmp(&b.1.id)));
    by_distance
        .into_iter()
        .map(|(d, p)| {
            let tool = p.aim.as_ref().map_or(String::new(), |a| {
                // The aim's radius (a block tool sends half its block's edge).
                format!(
                    "   {} r {:.1} m{}",
                    a.tool,
                    a.radius,
                    if a.point.is_some() { "" } else { " (no aim)" }
                )
            });
            format!("{} #{}   {d:.0} m{tool}", p.name, p.id)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aim(point: Option<[f64; 3]>, radius: f64) -> Aim {
        Aim {
            tool: "cube".into(),
            point,
            radius,
        }
    }

    #[test]
    fn presence_is_sent_on_change_at_most_every_100_ms() {
        let mut t = PresenceTracker::default();
        let t0 = Instant::now();
        let p = [1.0, 2.0, 3.0];
        assert!(
            t.due(t0, p, aim(Some([0.0; 3]), 2.0)).is_some(),
            "the first"
        );
        let later = t0 + PRESENCE_EVERY;
        assert!(
            t.due(later, p, aim(Some([0.0; 3]), 2.0)).is_none(),
            "unchanged"
        );
        assert!(
            t.due(later, p, aim(Some([0.05, 0.0, 0.0]), 2.0)).is_none(),
            "under 0.1 m"
        );
        let soon = t0 + PRESENCE_EVERY / 2;
        assert!(
            t.due(soon, p, aim(Some([5.0; 3]), 2.0)).is_none(),
            "too soon"
        );
        match t.due(later, p, aim(Some([5.0; 3]), 2.0)) {
            Some(RemoteCommand::Presence { position, aim }) => {
                assert_eq!(position, p);
                assert_eq!(aim.point, Some([5.0; 3]));
            }
            c => panic!("{c:?}"),
        }
        let l2 = later + PRESENCE_EVERY;
        assert!(
            t.due(l2, p, aim(None, 2.0)).is_some(),
            "aiming at nothing is a change"
        );
        let l3 = l2 + PRESENCE_EVERY;
        assert!(t.due(l3, p, aim(None, 3.0)).is_some(), "the radius");
        let l4 = l3 + PRESENCE_EVERY;
        assert!(
            t.due(l4, [f64::NAN, 0.0, 0.0], aim(None, 3.0)).is_none(),
            "never NaN"
        );
    }

    #[test]
    fn hud_lines_are_nearest_first() {
        let player = |id, x: f64, aim| Player {
            id,
            name: format!("p{id}"),
            position: [x, 0.0, 0.0],
            aim,
        };
        let lines = player_lines(
            &[
                player(1, 30.0, None),
                player(2, 10.0, Some(aim(Some([0.0; 3]), 2.5))),
                player(3, -20.0, Some(aim(None, 1.0))),
            ],
            Vec3::ZERO,
        );
        assert_eq!(
            lines,
            vec![
                "p2 #2   10 m   cube r 2.5 m",
                "p3 #3   20 m   cube r 1.0 m (no aim)",
                "p1 #1   30 m",
            ]
        );
    }
}
