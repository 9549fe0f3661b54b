//! Session version 2's timeline: ops with times, viewer paths, and the chunk pipeline's
//! settings.

use std::time::Duration;

use loam_field::{EditOp, Num};
use loam_mesh::Mesher;
use loam_world::{Viewer, WorldSettings};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An op, the time it is applied (seconds from the start of the timeline) and the stroke it
/// belongs to. Written as the op's own object with an optional `"t"` — without it the op
/// comes one frame after the previous op (the first at `t = 0`) — and an optional
/// `"stroke"` grouping the ops of one held button (ids increase; without it the op is a
/// stroke of its own). For `undo` and `redo`, `"stroke"` is the op's own field: the stroke
/// it reverts.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedOp {
    /// Seconds from the start, if given.
    pub t: Option<f64>,
    /// The stroke, if given.
    pub stroke: Option<u64>,
    /// The op.
    pub op: EditOp,
}

fn reverts(op: &EditOp) -> bool {
    matches!(op, EditOp::Undo { .. } | EditOp::Redo { .. })
}

impl Serialize for TimedOp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = serde_json::to_value(&self.op).map_err(serde::ser::Error::custom)?;
        if let Some(map) = v.as_object_mut() {
            if let Some(t) = self.t {
                map.insert("t".into(), t.into());
            }
            if let (Some(k), false) = (self.stroke, reverts(&self.op)) {
                map.insert("stroke".into(), k.into());
            }
        }
        v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for TimedOp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut v = serde_json::Value::deserialize(d)?;
        let map = v
            .as_object_mut()
            .ok_or_else(|| D::Error::custom("an op must be a JSON object"))?;
        let t = match map.remove("t") {
            None => None,
            Some(t) => Some(t.as_f64().ok_or_else(|| {
                D::Error::custom(format!("op time `t` must be a number, found {t}"))
            })?),
        };
        let kind = map.get("kind").and_then(|k| k.as_str()).unwrap_or_default();
        let stroke = match (kind, map.get("stroke")) {
            ("undo" | "redo", _) | (_, None) => None,
            (_, Some(k)) => {
                let k = k.as_u64().ok_or_else(|| {
                    D::Error::custom(format!(
                        "`stroke` must be a non-negative integer, found {k}"
                    ))
                })?;
                map.remove("stroke");
                Some(k)
            }
        };
        let op = serde_json::from_value(v).map_err(D::Error::custom)?;
        Ok(Self { t, stroke, op })
    }
}

/// One point of a viewer's path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waypoint {
    /// Seconds from the start.
    pub t: f64,
    /// World position, metres.
    pub position: [f64; 3],
}

/// A viewer moving along straight segments between waypoints; before the first it stands at
/// the first, after the last at the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewerPath {
    /// Waypoints with non-decreasing times; at least one.
    pub path: Vec<Waypoint>,
}

impl ViewerPath {
    /// The viewer at time `t` seconds.
    pub fn at(&self, t: f64) -> Viewer {
        let p = &self.path;
        let i = p.partition_point(|w| w.t <= t);
        let position = if i == 0 {
            p[0].position
        } else if i == p.len() {
            p[i - 1].position
        } else {
            let (a, b) = (p[i - 1], p[i]);
            let f = if b.t > a.t {
                (t - a.t) / (b.t - a.t)
            } else {
                1.0
            };
            std::array::from_fn(|k| a.position[k] + (b.position[k] - a.position[k]) * f)
        };
        Viewer::at(position)
    }

    /// The last waypoint's time.
    pub fn end(&self) -> f64 {
        self.path.last().map_or(0.0, |w| w.t)
    }
}

/// The chunk pipeline's settings in a session (`"world"`); every one has a default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldSpec {
    /// View radius in chunks. Default 8.
    pub view_radius: u32,
    /// Chunk layers loaded below the viewer. Default 4.
    pub view_depth: u32,
    /// Hysteresis in chunks. Default 2.
    pub unload_margin: u32,
    /// Merge window for overlapping edits, ms. Default 250.
    pub merge_window_ms: u64,
    /// Seconds per frame of the timeline, in `[0.001, 1]`. Default 1/60.
    pub frame_s: f64,
}

impl Default for WorldSpec {
    fn default() -> Self {
        let w = WorldSettings::default();
        Self {
            view_radius: w.view_radius,
            view_depth: w.view_depth,
            unload_margin: w.unload_margin,
            merge_window_ms: w.merge_window.as_millis() as u64,
            frame_s: 1.0 / 60.0,
        }
    }
}

impl WorldSpec {
    /// The pipeline's settings with `threads` workers (0: default) and `mesher`.
    pub fn settings(&self, threads: usize, mesher: Mesher) -> WorldSettings {
        WorldSettings {
            view_radius: self.view_radius,
            view_depth: self.view_depth,
            unload_margin: self.unload_margin,
            threads,
            mesher,
            merge_window: Duration::from_millis(self.merge_window_ms),
            ..WorldSettings::default()
        }
    }
}

/// The longest timeline a session may have, seconds (an hour of frames).
pub const MAX_TIMELINE_S: f64 = 3600.0;

/// The most viewers a session may have.
pub const MAX_VIEWERS: usize = 64;

/// Largest |coordinate| of a viewer, metres.
pub const MAX_VIEWER_COORD: f64 = 1e9;

fn check_time(what: &str, t: f64, last: f64) -> Result<(), String> {
    if !t.is_finite() {
        return Err(format!("{what}: time {t} is not a finite number"));
    }
    if t < 0.0 {
        return Err(format!("{what}: time {} s is negative", Num(t)));
    }
    if t < last {
        return Err(format!(
            "{what}: time {} s goes back (the previous one is {} s)",
            Num(t),
            Num(last)
        ));
    }
    if t > MAX_TIMELINE_S {
        return Err(format!(
            "{what}: time {} s is beyond the longest timeline, {MAX_TIMELINE_S} s",
            Num(t)
        ));
    }
    Ok(())
}

/// Checks the timeline: times finite, in `[0, 3600]` s and non-decreasing; at most 64 viewers,
/// each with a waypoint, at finite positions within ±10⁹ m; a frame length in range; and, for
/// a version-1 file, none of version 2's fields. Returns what is wrong.
pub fn validate(
    version: u32,
    ops: &[TimedOp],
    viewers: &[ViewerPath],
    world: &WorldSpec,
) -> Result<(), String> {
    if version < 2
        && (!viewers.is_empty()
            || *world != WorldSpec::default()
            || ops.iter().any(|o| o.t.is_some() || o.stroke.is_some()))
    {
        return Err("`world`, `viewers`, and op `t` and `stroke` need \"version\": 2".to_string());
    }
    if !(0.001..=1.0).contains(&world.frame_s) {
        return Err(format!(
            "world.frame_s = {} is outside [0.001, 1]",
            Num(world.frame_s)
        ));
    }
    let mut last = 0.0;
    for (i, op) in ops.iter().enumerate() {
        if let Some(t) = op.t {
            check_time(&format!("op {i}"), t, last)?;
            last = t;
        }
    }
    if viewers.len() > MAX_VIEWERS {
        return Err(format!(
            "{} viewers; at most {MAX_VIEWERS} are supported",
            viewers.len()
        ));
    }
    for (i, v) in viewers.iter().enumerate() {
        if v.path.is_empty() {
            return Err(format!("viewer {i} has an empty path"));
        }
        let mut last = 0.0;
        for (j, w) in v.path.iter().enumerate() {
            check_time(&format!("viewer {i}, waypoint {j}"), w.t, last)?;
            if w.position
                .iter()
                .any(|p| !p.is_finite() || p.abs() > MAX_VIEWER_COORD)
            {
                return Err(format!(
                    "viewer {i}, waypoint {j}: position {:?} is not finite or beyond ±{MAX_VIEWER_COORD} m",
                    w.position
                ));
            }
            last = w.t;
        }
    }
    Ok(())
}

/// The time of every op: its `t`, or one frame after the previous op.
pub fn op_times(ops: &[TimedOp], frame_s: f64) -> Vec<f64> {
    let mut prev: Option<f64> = None;
    ops.iter()
        .map(|op| {
            let t = op.t.unwrap_or_else(|| prev.map_or(0.0, |p| p + frame_s));
            prev = Some(t);
            t
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timed_ops_read_and_write_t_beside_the_op() {
        let j = r#"{"kind": "sphere", "mode": "dig", "center": [1, 2, 3], "radius": 2, "t": 1.5, "stroke": 4}"#;
        let op: TimedOp = serde_json::from_str(j).unwrap();
        assert_eq!((op.t, op.stroke), (Some(1.5), Some(4)));
        let undo: TimedOp =
            serde_json::from_str(r#"{"kind": "undo", "stroke": 4, "t": 2}"#).unwrap();
        assert_eq!(undo.op, EditOp::Undo { stroke: 4 });
        assert_eq!(undo.stroke, None);
        let back: TimedOp = serde_json::from_str(&serde_json::to_string(&undo).unwrap()).unwrap();
        assert_eq!(back, undo);
        let back: TimedOp = serde_json::from_str(&serde_json::to_string(&op).unwrap()).unwrap();
        assert_eq!(back, op);
        let bad = r#"{"kind": "sphere", "mode": "dig", "center": [1, 2, 3], "radius": 2, "tt": 1}"#;
        assert!(serde_json::from_str::<TimedOp>(bad).is_err());
        let bad =
            r#"{"kind": "sphere", "mode": "dig", "center": [1, 2, 3], "radius": 2, "t": "x"}"#;
        assert!(serde_json::from_str::<TimedOp>(bad).is_err());
    }

    #[test]
    fn paths_interpolate_and_hold_their_ends() {
        let v = ViewerPath {
            path: vec![
                Waypoint {
                    t: 1.0,
                    position: [0.0, 0.0, 0.0],
                },
                Waypoint {
                    t: 3.0,
                    position: [10.0, 20.0, -4.0],
                },
            ],
        };
        assert_eq!(v.at(0.0).position, [0.0, 0.0, 0.0]);
        assert_eq!(v.at(2.0).position, [5.0, 10.0, -2.0]);
        assert_eq!(v.at(9.0).position, [10.0, 20.0, -4.0]);
    }

    #[test]
    fn op_times_fill_in_one_frame_apart() {
        let op = |t| TimedOp {
            t,
            stroke: None,
            op: serde_json::from_str(
                r#"{"kind": "sphere", "mode": "dig", "center": [0, 0, 0], "radius": 1}"#,
            )
            .unwrap(),
        };
        let ops = [op(None), op(None), op(Some(2.0)), op(None)];
        assert_eq!(op_times(&ops, 0.5), vec![0.0, 0.5, 2.0, 2.5]);
        let w = WorldSpec::default();
        assert!(validate(2, &[op(Some(2.0)), op(Some(1.0))], &[], &w).is_err());
        assert!(
            validate(2, &[op(Some(1e20))], &[], &w)
                .unwrap_err()
                .contains("longest")
        );
        assert!(validate(2, &[op(Some(f64::INFINITY))], &[], &w).is_err());
        // A first op before 0 s is negative, not "going back" from an op that is not there;
        // huge and tiny times take an exponent.
        assert_eq!(
            validate(2, &[op(Some(-1e-300))], &[], &w).unwrap_err(),
            "op 0: time -1e-300 s is negative"
        );
        assert_eq!(
            validate(2, &[op(Some(2.0)), op(Some(1.5))], &[], &w).unwrap_err(),
            "op 1: time 1.5 s goes back (the previous one is 2 s)"
        );
        assert!(
            validate(2, &[op(Some(1e300))], &[], &w)
                .unwrap_err()
                .starts_with("op 0: time 1e300 s is beyond")
        );
        assert!(
            validate(1, &[op(Some(1.0))], &[], &w)
                .unwrap_err()
                .contains("version")
        );
        assert!(validate(2, &[op(Some(1.0)), op(None)], &[], &w).is_ok());
        let far = ViewerPath {
            path: vec![Waypoint {
                t: 0.0,
                position: [1e12, 0.0, 0.0],
            }],
        };
        assert!(validate(2, &[], &[far], &w).is_err());
    }
}
