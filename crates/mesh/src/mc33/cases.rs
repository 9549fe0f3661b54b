//! The per-case logic of Marching Cubes 33: the face tests of Lewiner et al. 2003 choose among
//! the tilings of [`crate::mc33_tables`], and an interior test replaces theirs.
//!
//! The tests read `w = −field`, so that Lewiner's index (bit set when a corner is positive) is
//! loam's (bit set when a corner is inside). Ties are broken as if every sample were raised by
//! an infinitesimal amount: a face saddle worth exactly 0 is air, like a sample worth exactly 0.
//! That perturbed field is a genuine trilinear field, so the face decisions of a cell always form
//! a combination the tables cover.
//!
//! Two departures from Lewiner's procedure, which got four of CGAL's fourteen ambiguous
//! single-cube cases wrong here (cf. Custódio et al. 2013, "Practical considerations on
//! Marching Cubes 33 topological correctness", on defects of that implementation):
//! - Lewiner's interior test (a slice through a reference edge's crossing) misses tunnels; here
//!   a tunnel is looked for directly: two same-sign corners at the ends of a body diagonal that
//!   the faces leave apart are joined through the cell when some slice across the cell, along
//!   any axis, joins the two edges of the cell that hold them (Chernyaev's slice argument).
//! - The tables only hold the tunnel of the corners that are positive in the case index (cases
//!   10, 12 and 13.5). When the tunnel belongs to the other sign, the cell is tiled from the
//!   complementary index (`255 − index`, `w → −w`), whose tiling winds the other way.

use crate::mc33_tables::*;
use crate::tables::{CORNERS, EDGES};

/// Corners `(A, B, C, D)` of Lewiner's faces 1..=6, going round the face: `A`–`C` and `B`–`D` are
/// its diagonals. Faces: 1 y = 0, 2 x = 1, 3 y = 1, 4 x = 0, 5 z = 0, 6 z = 1.
const FACES: [[usize; 4]; 6] = [
    [0, 4, 5, 1],
    [1, 5, 6, 2],
    [2, 6, 7, 3],
    [3, 7, 4, 0],
    [0, 3, 2, 1],
    [4, 7, 6, 5],
];

/// The corner at coordinates `c`.
fn corner(c: [usize; 3]) -> usize {
    4 * c[2] + [[0, 3], [1, 2]][c[0]][c[1]]
}

/// A tiling: vertex triples (0..=11 the edges, 12 a vertex inside the cell), and whether they
/// wind counter-clockwise seen from the air already (a tiling of the complementary index).
pub(crate) type Tiling = (&'static [i8], bool);

/// The tiling of the cell with case index `index` (bit `m` set when corner `m` is inside) and
/// corner values `w = −field`.
pub(crate) fn tiling(index: usize, w: &[f64; 8]) -> Tiling {
    View {
        w: *w,
        index,
        complement: false,
    }
    .tiling()
}

/// A cell seen through its case index: "positive" corners are those whose bit is set.
struct View {
    w: [f64; 8],
    index: usize,
    /// Whether this is the complementary view: index and values negated. Face ties then join
    /// the positive corners (the air), so both views decide every face alike.
    complement: bool,
}

impl View {
    fn positive(&self, m: usize) -> bool {
        self.index >> m & 1 == 1
    }

    fn complement(&self) -> View {
        View {
            w: self.w.map(|v| -v),
            index: 255 - self.index,
            complement: !self.complement,
        }
    }

    /// Whether face `f` (0..6) joins its positive corners (asymptotic decider). Reads the face's
    /// four samples only; products of f32 samples are exact in f64, so the decision is exact.
    fn face_joins_positive(&self, f: usize) -> bool {
        let [a, b, c, d] = FACES[f];
        let (ac, bd) = (self.w[a] * self.w[c], self.w[b] * self.w[d]);
        if ac == bd {
            // The saddle is worth exactly 0: air.
            return self.complement;
        }
        // The saddle is (ac − bd) / (wa + wc − wb − wd); the denominator has the sign of a.
        if self.positive(a) { ac > bd } else { ac < bd }
    }

    /// Lewiner's face test: `face` is signed (1..=6); true when the positive corners are joined
    /// across it, negated for a negative `face`.
    fn face(&self, face: i8) -> bool {
        self.face_joins_positive(usize::from(face.unsigned_abs()) - 1) == (face > 0)
    }

    /// Corner components joined by the cell's edges and faces: `root[m]` names corner `m`'s.
    fn face_components(&self) -> [usize; 8] {
        let mut root: [usize; 8] = std::array::from_fn(|m| m);
        fn find(root: &mut [usize; 8], mut m: usize) -> usize {
            while root[m] != m {
                m = root[m];
            }
            m
        }
        let join = |root: &mut [usize; 8], a: usize, b: usize| {
            let (ra, rb) = (find(root, a), find(root, b));
            root[ra] = rb;
        };
        for [a, b] in EDGES.map(|e| e.map(usize::from)) {
            if self.positive(a) == self.positive(b) {
                join(&mut root, a, b);
            }
        }
        for (f, &[a, b, c, d]) in FACES.iter().enumerate() {
            if self.positive(a) == self.positive(c)
                && self.positive(b) == self.positive(d)
                && self.positive(a) != self.positive(b)
            {
                let joined = if self.positive(a) == self.face_joins_positive(f) {
                    [a, c]
                } else {
                    [b, d]
                };
                join(&mut root, joined[0], joined[1]);
            }
        }
        std::array::from_fn(|m| find(&mut root, m))
    }

    /// The values with corner `m`'s sign made positive.
    fn signed_values(&self, m: usize) -> [f64; 8] {
        if self.positive(m) {
            self.w
        } else {
            self.w.map(|v| -v)
        }
    }

    /// The interior test: whether two same-sign corners at the ends of a body diagonal, left
    /// apart by the faces, are joined through the cell.
    fn tunnel(&self) -> bool {
        let root = self.face_components();
        (0..4).any(|p| {
            let q = opposite(p);
            self.positive(p) == self.positive(q)
                && root[p] != root[q]
                && slice_joins(&self.signed_values(p), p)
        })
    }

    fn tiling(&self) -> Tiling {
        let [case, config] = CASES[self.index];
        let cfg = config.max(0) as usize;
        let air = self.complement;
        let t: &'static [i8] = match case {
            1 => &TILING1[cfg],
            2 => &TILING2[cfg],
            3 => {
                if self.face(TEST3[cfg]) {
                    &TILING3_2[cfg]
                } else {
                    &TILING3_1[cfg]
                }
            }
            4 => {
                if self.tunnel() {
                    &TILING4_2[cfg]
                } else {
                    &TILING4_1[cfg]
                }
            }
            5 => &TILING5[cfg],
            6 => {
                if self.face(TEST6[cfg][0]) {
                    &TILING6_2[cfg]
                } else if self.tunnel() {
                    &TILING6_1_2[cfg]
                } else {
                    &TILING6_1_1[cfg]
                }
            }
            7 => {
                let [f0, f1, f2, ..] = TEST7[cfg];
                match usize::from(self.face(f0))
                    | usize::from(self.face(f1)) << 1
                    | usize::from(self.face(f2)) << 2
                {
                    0 => &TILING7_1[cfg],
                    1 => &TILING7_2[cfg][0],
                    2 => &TILING7_2[cfg][1],
                    3 => &TILING7_3[cfg][0],
                    4 => &TILING7_2[cfg][2],
                    5 => &TILING7_3[cfg][1],
                    6 => &TILING7_3[cfg][2],
                    _ => {
                        if self.tunnel() {
                            &TILING7_4_2[cfg]
                        } else {
                            &TILING7_4_1[cfg]
                        }
                    }
                }
            }
            8 => &TILING8[cfg],
            9 => &TILING9[cfg],
            10 | 12 => {
                let ([f0, f1], tables): ([i8; 2], [&'static [i8]; 5]) = if case == 10 {
                    let [f0, f1, _] = TEST10[cfg];
                    (
                        [f0, f1],
                        [
                            &TILING10_1_1_[cfg],
                            &TILING10_2[cfg],
                            &TILING10_2_[cfg],
                            &TILING10_1_1[cfg],
                            &TILING10_1_2[cfg],
                        ],
                    )
                } else {
                    let [f0, f1, ..] = TEST12[cfg];
                    (
                        [f0, f1],
                        [
                            &TILING12_1_1_[cfg],
                            &TILING12_2[cfg],
                            &TILING12_2_[cfg],
                            &TILING12_1_1[cfg],
                            &TILING12_1_2[cfg],
                        ],
                    )
                };
                match (self.face(f0), self.face(f1)) {
                    // The faces join the positive corners: a tunnel would be the negative
                    // corners', which the tables tile only from the complementary index.
                    (true, true) if !self.complement && self.tunnel() => {
                        return self.complement().tiling();
                    }
                    (true, true) => tables[0],
                    (true, false) => tables[1],
                    (false, true) => tables[2],
                    (false, false) if self.tunnel() => tables[4],
                    (false, false) => tables[3],
                }
            }
            11 => &TILING11[cfg],
            13 => return self.case13(cfg),
            14 => &TILING14[cfg],
            _ => &[],
        };
        (t, air)
    }

    /// Case 13: six ambiguous faces, then possibly the interior (13.5).
    fn case13(&self, cfg: usize) -> Tiling {
        let tests = TEST13[cfg];
        let bits = (0..6).fold(0usize, |acc, k| acc | usize::from(self.face(tests[k])) << k);
        let air = self.complement;
        let t: &'static [i8] = match SUBCONFIG13[bits] {
            0 => &TILING13_1[cfg],
            k @ 1..=6 => &TILING13_2[cfg][k as usize - 1],
            k @ 7..=18 => &TILING13_3[cfg][k as usize - 7],
            k @ 19..=22 => &TILING13_4[cfg][k as usize - 19],
            k @ 23..=26 => {
                // 13.5: one corner of each sign is cut off by the faces, at the two ends of a
                // body diagonal. A tunnel may join either to the rest of its sign; the tables
                // hold only the positive one (13.5.2), the complementary index the other.
                let k = k as usize - 23;
                let root = self.face_components();
                let lone = |positive: bool| {
                    (0..8).find(|&m| {
                        self.positive(m) == positive && (0..8).all(|n| n == m || root[n] != root[m])
                    })
                };
                match (lone(true), lone(false)) {
                    (Some(p), _) if slice_joins(&self.w, p) => &TILING13_5_2[cfg][k],
                    (_, Some(n)) if !self.complement && slice_joins(&self.w.map(|v| -v), n) => {
                        return self.complement().tiling();
                    }
                    _ => &TILING13_5_1[cfg][k],
                }
            }
            k @ 27..=38 => &TILING13_3_[cfg][k as usize - 27],
            k @ 39..=44 => &TILING13_2_[cfg][k as usize - 39],
            45 => &TILING13_1_[cfg],
            // Not reachable with exact face decisions (see the module doc); NaN samples may get
            // here. Emit 13.1 rather than panic.
            _ => &TILING13_1[cfg],
        };
        (t, air)
    }
}

/// The corner at the other end of corner `p`'s body diagonal.
fn opposite(p: usize) -> usize {
    corner(CORNERS[p].map(|c| 1 - usize::from(c)))
}

/// Whether corner `p`, where `u > 0`, is joined to the region `u > 0` around the far end of its
/// body diagonal through a slice of the cell. For each axis, the slices across it cut the four
/// cell edges along it at `A` (the edge through `p`), `C` (diagonally opposite), `B` and `D`; a
/// slice joins `A` and `C` when both are positive and `A·C > B·D` (its bilinear saddle is
/// positive, or `B` or `D` is). `A·C − B·D` is quadratic in the slice position, so its maximum
/// over the positions where `A` and `C` are positive is at an end of that interval or at the
/// parabola's apex.
fn slice_joins(u: &[f64; 8], p: usize) -> bool {
    let pc = CORNERS[p].map(usize::from);
    (0..3).any(|k| {
        let [o1, o2] = [(k + 1) % 3, (k + 2) % 3];
        // The edge along axis k through p flipped across `flips`, from p's side: (value, slope).
        let edge = |flips: &[usize]| {
            let mut c = pc;
            for &a in flips {
                c[a] = 1 - c[a];
            }
            let lo = u[corner(c)];
            c[k] = 1 - c[k];
            (lo, u[corner(c)] - lo)
        };
        let (a, b, c, d) = (edge(&[]), edge(&[o1]), edge(&[o1, o2]), edge(&[o2]));
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for (x0, dx) in [a, c] {
            if dx == 0.0 {
                if x0 <= 0.0 {
                    return false;
                }
            } else if dx > 0.0 {
                lo = lo.max(-x0 / dx);
            } else {
                hi = hi.min(-x0 / dx);
            }
        }
        if lo >= hi {
            return false;
        }
        let at = |(x0, dx): (f64, f64), t: f64| x0 + dx * t;
        let f = |t: f64| at(a, t) * at(c, t) - at(b, t) * at(d, t);
        let qa = a.1 * c.1 - b.1 * d.1;
        let qb = a.0 * c.1 + c.0 * a.1 - b.0 * d.1 - d.0 * b.1;
        let apex = if qa < 0.0 {
            Some(-qb / (2.0 * qa)).filter(|&t| lo < t && t < hi)
        } else {
            None
        };
        f(lo) > 0.0 || f(hi) > 0.0 || apex.is_some_and(|t| f(t) > 0.0)
    })
}
