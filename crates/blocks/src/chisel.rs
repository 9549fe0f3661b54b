//! Chisel shapes: rounded edges and a sloped face.
//!
//! ```text
//!   rounded edge (radius ¼ edge,            slope: face PosY toward PosX, depth 2
//!   three flat facets on the arc)
//!        ____                                ‾‾‾‾‾‾‾‾‾‾‾‾--____     ↑ face drops 2/4 of
//!       |    ‾-.                            |                  |   ↓ the edge at +x
//!       |       \                           |                  |
//!       |        |                          |__________________|
//! ```
//!
//! A shape is the unit cube cut by half-spaces: three per rounded edge (chords of the
//! quarter circle at 0°, 30°, 60° and 90°, so the solid is slightly inside the true round)
//! and one for the slope. The result is always convex; its corners ([`ChiselShape::hull`])
//! are what colliders and meshes are built from.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::block::Face;
use crate::error::BlockError;

/// Radius of a rounded edge as a fraction of the block's edge.
pub const ROUND_RADIUS: f64 = 0.25;

/// One of a cube's 12 edges: the axis it runs along and the sides of the other two axes
/// it lies on. Its bit in [`ChiselShape::rounded`] is `1 << (4 · axis + first_high + 2 ·
/// second_high)`: the edge between the top (+y) and +x faces runs along z, is bit 11.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge(u8);

impl Edge {
    /// The edge along `axis` (0 = x, 1 = y, 2 = z) on the high (`true`) or low side of
    /// the first and second of the other two axes (in x, y, z order).
    pub fn new(axis: usize, first_high: bool, second_high: bool) -> Edge {
        Edge(((axis % 3) * 4 + usize::from(first_high) + 2 * usize::from(second_high)) as u8)
    }

    /// The edge shared by two faces, or `None` for equal or opposite faces.
    pub fn between(a: Face, b: Face) -> Option<Edge> {
        if a.axis() == b.axis() {
            return None;
        }
        let axis = 3 - a.axis() - b.axis();
        let (first, second) = if a.axis() < b.axis() { (a, b) } else { (b, a) };
        Some(Edge::new(axis, first.positive(), second.positive()))
    }

    /// All twelve.
    pub fn all() -> impl Iterator<Item = Edge> {
        (0..12).map(Edge)
    }

    /// Its bit in [`ChiselShape::rounded`].
    pub fn bit(self) -> u16 {
        1 << self.0
    }

    /// `(axis, [(other axis, high side); 2])`.
    fn parts(self) -> (usize, [(usize, bool); 2]) {
        let axis = usize::from(self.0 / 4);
        let others = [(axis + 1) % 3, (axis + 2) % 3];
        let (u, v) = (others[0].min(others[1]), others[0].max(others[1]));
        (axis, [(u, self.0 & 1 != 0), (v, self.0 & 2 != 0)])
    }
}

/// A face cut into a slope: `face` tilts so that it drops by `depth` quarters of the edge
/// at its border toward `toward` (a face at right angles to it), staying where it was at
/// the opposite border. Depth 4 is a full wedge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slope {
    /// The face that slopes.
    pub face: Face,
    /// The side it slopes down toward.
    pub toward: Face,
    /// How far it drops there, in quarters of the block's edge, 1 to 4.
    pub depth: u8,
}

/// A block's chisel shape. The default is a sharp cube.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(deny_unknown_fields)]
pub struct ChiselShape {
    /// Rounded edges, one bit per [`Edge`] (12 bits used).
    #[serde(default)]
    pub rounded: u16,
    /// A sloped face, if any.
    #[serde(default)]
    pub slope: Option<Slope>,
}

/// A face of a chiselled block ([`ChiselShape::faces`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ChiselFace {
    /// Outward unit normal.
    pub normal: [f64; 3],
    /// Corners, block-local metres, counter-clockwise seen from outside.
    pub points: Vec<[f64; 3]>,
}

/// A half-space `n · p <= d` of the unit cube's local space.
#[derive(Clone, Copy, Debug)]
struct Plane {
    n: [f64; 3],
    d: f64,
}

impl ChiselShape {
    /// The sharp cube.
    pub const SHARP: ChiselShape = ChiselShape {
        rounded: 0,
        slope: None,
    };

    /// Whether it is the sharp cube.
    pub fn is_sharp(&self) -> bool {
        *self == Self::SHARP
    }

    /// This shape with `edge` rounded.
    pub fn with_round(self, edge: Edge) -> Self {
        Self {
            rounded: self.rounded | edge.bit(),
            ..self
        }
    }

    /// This shape with `edge` sharp again.
    pub fn sharpened(self, edge: Edge) -> Self {
        Self {
            rounded: self.rounded & !edge.bit(),
            ..self
        }
    }

    /// This shape with a slope (or none).
    pub fn with_slope(self, slope: Option<Slope>) -> Self {
        Self { slope, ..self }
    }

    /// Whether `edge` is rounded.
    pub fn is_round(&self, edge: Edge) -> bool {
        self.rounded & edge.bit() != 0
    }

    /// Checks the bits and the slope.
    ///
    /// # Errors
    /// [`BlockError::BadShape`] for bits above the 12 edges, a slope toward its own axis
    /// or a depth outside 1–4.
    pub fn validate(&self) -> Result<(), BlockError> {
        if self.rounded >> 12 != 0 {
            return Err(BlockError::BadShape {
                reason: "only the low 12 bits of `rounded` name edges",
            });
        }
        if let Some(s) = self.slope {
            if s.face.axis() == s.toward.axis() {
                return Err(BlockError::BadShape {
                    reason: "a slope's `toward` must be at right angles to its face",
                });
            }
            if !(1..=4).contains(&s.depth) {
                return Err(BlockError::BadShape {
                    reason: "a slope's depth is 1 to 4 quarters of the edge",
                });
            }
        }
        Ok(())
    }

    /// The cuts (beyond the cube's own faces), unit cube `[0, 1]³`.
    fn cuts(&self) -> Vec<Plane> {
        let mut planes = Vec::new();
        for edge in Edge::all().filter(|e| self.is_round(*e)) {
            let (_, [(u, uh), (v, vh)]) = edge.parts();
            // Arc centre inset by the radius from the edge, outward directions along u, v.
            let su = if uh { 1.0 } else { -1.0 };
            let sv = if vh { 1.0 } else { -1.0 };
            let cu = if uh { 1.0 - ROUND_RADIUS } else { ROUND_RADIUS };
            let cv = if vh { 1.0 - ROUND_RADIUS } else { ROUND_RADIUS };
            // (cos, sin) of 0°, 30°, 60° and 90°.
            const ARC: [(f64, f64); 4] = [
                (1.0, 0.0),
                (0.866_025_403_784_438_6, 0.5),
                (0.5, 0.866_025_403_784_438_6),
                (0.0, 1.0),
            ];
            let arc = |k: usize| {
                let (c, s) = ARC[k];
                (cu + su * ROUND_RADIUS * c, cv + sv * ROUND_RADIUS * s)
            };
            for k in 0..3 {
                let (p, q) = (arc(k), arc(k + 1));
                // Normal of the chord, pointing away from the arc's centre.
                let (du, dv) = (q.0 - p.0, q.1 - p.1);
                let (mut nu, mut nv) = (dv, -du);
                if nu * (p.0 - cu) + nv * (p.1 - cv) < 0.0 {
                    (nu, nv) = (-nu, -nv);
                }
                let mut n = [0.0; 3];
                n[u] = nu;
                n[v] = nv;
                planes.push(Plane {
                    n,
                    d: nu * p.0 + nv * p.1,
                });
            }
        }
        if let Some(s) = self.slope {
            // Inward depth from the face ≥ depth/4 · position toward `toward`.
            let (a, b) = (s.face.axis(), s.toward.axis());
            let k = f64::from(s.depth) / 4.0;
            let mut n = [0.0; 3];
            // depth_a = (1 − p_a) for a positive face, p_a otherwise;
            // t_b = p_b toward a positive side, (1 − p_b) otherwise.
            let (na, ca) = if s.face.positive() {
                (1.0, 1.0)
            } else {
                (-1.0, 0.0)
            };
            let (nb, cb) = if s.toward.positive() {
                (k, 0.0)
            } else {
                (-k, k)
            };
            // na·p_a + nb·p_b <= ca − cb  ⇔  depth_a >= k · t_b
            n[a] = na;
            n[b] = nb;
            planes.push(Plane { n, d: ca - cb });
        }
        planes
    }

    /// The faces of the shape for a block of `edge` metres, block-local: each a convex
    /// polygon, counter-clockwise seen from outside, with its outward unit normal (for
    /// meshes: fan-triangulate each polygon). The sharp cube gives its 6 squares.
    pub fn faces(&self, edge: f64) -> Vec<ChiselFace> {
        let planes = self.planes();
        let points = self.hull(1.0);
        let mut out = Vec::new();
        for pl in planes {
            let on: Vec<[f64; 3]> = points
                .iter()
                .copied()
                .filter(|p| (dot(pl.n, *p) - pl.d).abs() < 1e-9)
                .collect();
            if on.len() < 3 {
                continue;
            }
            let len = dot(pl.n, pl.n).sqrt();
            let n = pl.n.map(|c| c / len);
            let k = on.len() as f64;
            let c = [0, 1, 2].map(|i| on.iter().map(|p| p[i]).sum::<f64>() / k);
            // A basis (u, v) of the plane with u × v = n: angles around the centroid then
            // run counter-clockwise seen from outside.
            let u = {
                let d = [0, 1, 2].map(|i| on[0][i] - c[i]);
                let l = dot(d, d).sqrt();
                d.map(|x| x / l)
            };
            let v = cross(n, u);
            let mut ring: Vec<(f64, [f64; 3])> = on
                .iter()
                .map(|p| {
                    let d = [0, 1, 2].map(|i| p[i] - c[i]);
                    (libm::atan2(dot(d, v), dot(d, u)), *p)
                })
                .collect();
            ring.sort_by(|a, b| a.0.total_cmp(&b.0));
            out.push(ChiselFace {
                normal: n,
                points: ring.into_iter().map(|(_, p)| p.map(|x| x * edge)).collect(),
            });
        }
        out
    }

    /// The cube's faces and the cuts, unit cube.
    fn planes(&self) -> Vec<Plane> {
        let mut planes: Vec<Plane> = (0..6)
            .map(|i| {
                let f = Face::ALL[i];
                let mut n = [0.0; 3];
                n[f.axis()] = if f.positive() { 1.0 } else { -1.0 };
                Plane {
                    n,
                    d: if f.positive() { 1.0 } else { 0.0 },
                }
            })
            .collect();
        planes.extend(self.cuts());
        planes
    }

    /// The corners of the shape for a block of `edge` metres, block-local (the block's
    /// lowest corner at the origin), in a fixed order. The sharp cube gives its 8 corners.
    ///
    /// The unit shape's corners are computed once per shape in the process and kept (a
    /// shape is a few bits; the corners' search tries every triple of its up to 43 planes,
    /// and a client rebuilds a piece's parts for every block delta that names the piece).
    pub fn hull(&self, edge: f64) -> Vec<[f64; 3]> {
        static HULLS: std::sync::Mutex<BTreeMap<ChiselShape, Arc<[[f64; 3]]>>> =
            std::sync::Mutex::new(BTreeMap::new());
        let unit = {
            // A panic elsewhere while the lock was held leaves whole entries only.
            let mut hulls = HULLS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            hulls
                .entry(*self)
                .or_insert_with(|| self.unit_hull().into())
                .clone()
        };
        unit.iter().map(|p| p.map(|c| c * edge)).collect()
    }

    /// [`ChiselShape::hull`] of a block of 1 m, computed: every point where three of the
    /// shape's planes meet that is inside all of them, once, sorted.
    fn unit_hull(&self) -> Vec<[f64; 3]> {
        let planes = self.planes();
        let mut points: Vec<[f64; 3]> = Vec::new();
        let k = planes.len();
        for i in 0..k {
            for j in i + 1..k {
                for l in j + 1..k {
                    let Some(p) = intersect(planes[i], planes[j], planes[l]) else {
                        continue;
                    };
                    let inside = planes.iter().all(|pl| dot(pl.n, p) <= pl.d + 1e-9);
                    let fresh = points
                        .iter()
                        .all(|q| (0..3).any(|c| (q[c] - p[c]).abs() > 1e-9));
                    if inside && fresh {
                        points.push(p);
                    }
                }
            }
        }
        points.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        points
    }

    /// Whether a block-local point (unit cube coordinates, `[0, 1]³`) is inside the shape.
    pub fn contains_unit(&self, p: [f64; 3]) -> bool {
        p.iter().all(|c| (0.0..=1.0).contains(c))
            && self.cuts().iter().all(|pl| dot(pl.n, p) <= pl.d + 1e-12)
    }
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The point on all three planes, if they meet in one point.
fn intersect(a: Plane, b: Plane, c: Plane) -> Option<[f64; 3]> {
    let bc = cross(b.n, c.n);
    let det = dot(a.n, bc);
    if det.abs() < 1e-12 {
        return None;
    }
    let ca = cross(c.n, a.n);
    let ab = cross(a.n, b.n);
    Some([0, 1, 2].map(|i| (a.d * bc[i] + b.d * ca[i] + c.d * ab[i]) / det))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept corners are the computed ones, bit for bit, at any edge, on the first call
    /// and after: every rounding of the 12 edges one at a time and in pairs, with and
    /// without a slope.
    #[test]
    fn kept_hulls_equal_computed_ones() {
        let slope = Some(Slope {
            face: Face::ALL[2],
            toward: Face::ALL[0],
            depth: 2,
        });
        let mut shapes = vec![ChiselShape::SHARP];
        for a in 0..12 {
            for b in a..12 {
                for slope in [None, slope] {
                    shapes.push(ChiselShape {
                        rounded: (1 << a) | (1 << b),
                        slope,
                    });
                }
            }
        }
        let bits = |h: Vec<[f64; 3]>| h.iter().map(|p| p.map(f64::to_bits)).collect::<Vec<_>>();
        for round in 0..2 {
            for s in &shapes {
                for edge in [1.0, 0.25, 0.7] {
                    let computed = s.unit_hull().iter().map(|p| p.map(|c| c * edge)).collect();
                    assert_eq!(
                        bits(s.hull(edge)),
                        bits(computed),
                        "{s:?} at {edge}, round {round}"
                    );
                }
            }
        }
    }

    #[test]
    fn sharp_cube_has_eight_corners() {
        let h = ChiselShape::SHARP.hull(0.5);
        assert_eq!(h.len(), 8);
        assert!(h.contains(&[0.5, 0.5, 0.5]));
        assert!(h.contains(&[0.0, 0.0, 0.0]));
    }

    #[test]
    fn a_rounded_edge_replaces_two_corners_by_eight() {
        let e = Edge::between(Face::PosY, Face::PosX).unwrap();
        let s = ChiselShape::SHARP.with_round(e);
        let h = s.hull(1.0);
        // 6 untouched corners + 4 arc points at each end of the edge.
        assert_eq!(h.len(), 6 + 8, "{h:?}");
        assert!(!h.contains(&[1.0, 1.0, 0.0]));
        assert!(h.contains(&[1.0, 0.75, 0.0]));
        assert!(h.contains(&[0.75, 1.0, 1.0]));
        assert!(!s.contains_unit([0.99, 0.99, 0.5]));
        assert!(s.contains_unit([0.5, 0.99, 0.5]));
        assert_eq!(s.sharpened(e), ChiselShape::SHARP);
    }

    #[test]
    fn a_full_wedge_is_half_a_cube() {
        let s = ChiselShape::SHARP.with_slope(Some(Slope {
            face: Face::PosY,
            toward: Face::PosX,
            depth: 4,
        }));
        s.validate().unwrap();
        let h = s.hull(1.0);
        assert_eq!(h.len(), 6, "{h:?}");
        assert!(h.contains(&[0.0, 1.0, 0.0]));
        assert!(h.contains(&[1.0, 0.0, 1.0]));
        assert!(!h.contains(&[1.0, 1.0, 0.0]));
        assert!(s.contains_unit([0.2, 0.7, 0.5]));
        assert!(!s.contains_unit([0.7, 0.7, 0.5]));
        let half = ChiselShape::SHARP.with_slope(Some(Slope {
            face: Face::NegZ,
            toward: Face::NegY,
            depth: 2,
        }));
        // At y = 0 the −z face is pushed in by half the edge; at y = 1 not at all.
        assert!(!half.contains_unit([0.5, 0.0, 0.4]));
        assert!(half.contains_unit([0.5, 0.0, 0.6]));
        assert!(half.contains_unit([0.5, 1.0, 0.01]));
    }

    #[test]
    fn faces_close_the_shape_and_face_outward() {
        let e = Edge::between(Face::PosY, Face::NegX).unwrap();
        let shapes = [
            ChiselShape::SHARP,
            ChiselShape::SHARP.with_round(e),
            ChiselShape::SHARP.with_slope(Some(Slope {
                face: Face::PosY,
                toward: Face::PosZ,
                depth: 4,
            })),
        ];
        for (s, faces) in shapes.iter().zip([6, 6 + 3, 5]) {
            let f = s.faces(0.5);
            assert_eq!(f.len(), faces, "{s:?}");
            // Divergence theorem: the volume from the faces, positive if they face out.
            let mut volume = 0.0;
            for face in &f {
                let p = &face.points;
                for i in 1..p.len() - 1 {
                    volume += dot(p[0], cross(p[i], p[i + 1])) / 6.0;
                }
                // Counter-clockwise from outside: the polygon's own normal is the normal.
                let own = cross(
                    [0, 1, 2].map(|k| p[1][k] - p[0][k]),
                    [0, 1, 2].map(|k| p[2][k] - p[0][k]),
                );
                assert!(dot(own, face.normal) > 0.0, "{s:?} {face:?}");
            }
            let cube = 0.125;
            match faces {
                6 => assert!((volume - cube).abs() < 1e-12),
                5 => assert!((volume - cube / 2.0).abs() < 1e-12),
                _ => assert!(volume < cube && volume > cube * 0.98, "{volume}"),
            }
        }
    }

    #[test]
    fn bad_shapes_are_refused() {
        let s = ChiselShape {
            rounded: 1 << 12,
            slope: None,
        };
        assert!(s.validate().is_err());
        for (toward, depth) in [(Face::NegY, 2), (Face::PosX, 0), (Face::PosX, 5)] {
            let s = ChiselShape::SHARP.with_slope(Some(Slope {
                face: Face::PosY,
                toward,
                depth,
            }));
            assert!(s.validate().is_err(), "{s:?}");
        }
        assert_eq!(Edge::between(Face::PosX, Face::NegX), None);
        assert_eq!(Edge::all().count(), 12);
    }
}
