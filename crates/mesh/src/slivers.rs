//! Splitting zero-area slivers (three distinct, collinear vertices) into their neighbours, so
//! that dropping them opens no hole; part of the zero-area clean-up
//! ([`crate::normals::remove_degenerate`]). Its buffers live in the mesh buffer's scratch:
//! no allocation once they have grown.

use crate::normals::{cross, len2, sub};

/// Twice the squared area of triangle `t` (zero for a sliver).
fn area2(p: &[[f32; 3]], t: [u32; 3]) -> f32 {
    let [a, b, c] = t.map(|i| p[i as usize]);
    len2(cross(sub(b, a), sub(c, a)))
}

/// The undirected edge `{u, v}` as one key, lower id in the high half.
#[inline]
fn key(u: u32, v: u32) -> u64 {
    (u64::from(u.min(v)) << 32) | u64::from(u.max(v))
}

const EMPTY: u64 = u64::MAX;
const NONE: u32 = u32::MAX;

/// One edge's list of triangles, in the order they were attached.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    head: u32,
    tail: u32,
}

/// A slot holding no edge.
const VACANT: Slot = Slot {
    key: EMPTY,
    head: NONE,
    tail: NONE,
};

/// A list node: a triangle (`NONE` once unlinked) and the next node.
#[derive(Clone, Copy, Debug)]
struct Node {
    tri: u32,
    next: u32,
}

/// Edge → triangles using it, each edge's triangles in the order they were attached (the
/// order the splits visit neighbours in, and so the output's bits, depend on it): an
/// open-addressing table of edges heading linked lists in a node arena. Unlinking marks
/// nodes; nodes are reused from the next call on.
#[derive(Clone, Default, Debug)]
pub(crate) struct SliverWork {
    slots: Vec<Slot>,
    spare: Vec<Slot>,
    nodes: Vec<Node>,
    used: usize,
    pending: Vec<usize>,
    left: Vec<usize>,
    others: Vec<usize>,
    alive: Vec<bool>,
}

impl SliverWork {
    /// Empties the edge table, sized for about `edges` edges.
    fn clear(&mut self, edges: usize) {
        // The table an earlier call grew to, so that a repeated call grows nothing; but not
        // more than 4× what this call needs (after one dense chunk, every later call would
        // clear the whole table).
        let need = (2 * edges).next_power_of_two().max(16);
        let grown = self.slots.capacity().max(self.spare.capacity());
        let grown = if grown == 0 { 0 } else { 1 << grown.ilog2() };
        let n = need.max(grown.min(4 * need));
        self.slots.clear();
        self.slots.resize(n, VACANT);
        self.nodes.clear();
        self.used = 0;
    }

    #[inline]
    fn probe(slots: &[Slot], k: u64) -> usize {
        let mask = slots.len() - 1;
        let mut s = ((k ^ (k >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask;
        loop {
            let key = slots[s].key;
            if key == k || key == EMPTY {
                return s;
            }
            s = (s + 1) & mask;
        }
    }

    /// Doubles the table (into the spare one, whose capacity is kept across calls).
    fn grow(&mut self) {
        std::mem::swap(&mut self.slots, &mut self.spare);
        let n = 2 * self.spare.len();
        self.slots.clear();
        self.slots.resize(n, VACANT);
        for s in &self.spare {
            if s.key != EMPTY {
                let at = Self::probe(&self.slots, s.key);
                self.slots[at] = *s;
            }
        }
    }

    /// Attaches triangle `t` to edge `{u, v}`, after the triangles already there.
    fn push(&mut self, u: u32, v: u32, t: usize) {
        if 2 * (self.used + 1) > self.slots.len() {
            self.grow();
        }
        let k = key(u, v);
        let at = Self::probe(&self.slots, k);
        let node = self.nodes.len() as u32;
        self.nodes.push(Node {
            tri: t as u32,
            next: NONE,
        });
        let slot = &mut self.slots[at];
        if slot.key == EMPTY {
            *slot = Slot {
                key: k,
                head: node,
                tail: node,
            };
            self.used += 1;
        } else {
            self.nodes[slot.tail as usize].next = node;
            slot.tail = node;
        }
    }

    /// Detaches triangle `t` from edge `{u, v}` (every attachment of it there).
    fn unlink(&mut self, u: u32, v: u32, t: usize) {
        let at = Self::probe(&self.slots, key(u, v));
        let mut n = self.slots[at].head;
        while n != NONE {
            let node = &mut self.nodes[n as usize];
            if node.tri == t as u32 {
                node.tri = NONE;
            }
            n = node.next;
        }
    }

    /// Appends the triangles attached to edge `{u, v}`, in order, to `out`.
    fn users(&self, u: u32, v: u32, out: &mut Vec<usize>) {
        let at = Self::probe(&self.slots, key(u, v));
        let mut n = self.slots[at].head;
        while n != NONE {
            let node = self.nodes[n as usize];
            if node.tri != NONE {
                out.push(node.tri as usize);
            }
            n = node.next;
        }
    }
}

/// Removes zero-area triangles whose three distinct vertices are collinear without opening
/// a hole: with `b` between `a` and `c`, every neighbour `(a, c, d)` across the long edge is
/// split into `(a, b, d)` and `(b, c, d)` and the sliver dropped, which keeps every edge
/// used as often one way as the other. (Counted with signs, the split adds to each edge what
/// dropping the sliver takes away, once for each neighbour running `a → c`, less once for each
/// running `c → a`; on a closed mesh the edge `a c` has one more of the first than of the
/// second.)
///
/// A twin, the same three vertices the other way round, is dropped with the sliver instead.
/// A copy, the same three vertices the same way round (where two patches lie flat on zeros,
/// one over the other), is a neighbour running `c → a` whose split halves would have no area:
/// it is dropped, and the other neighbours split. (Taking a copy for a twin, as this once did,
/// dropped both and left three edges used twice the same way: the misoriented and
/// four-triangle edges of Surface Nets and Dual Contouring on grids of only −1 and 0.)
///
/// Slivers whose neighbours are not slivers are split first: such a split never makes a new
/// sliver. Only when none is left may a sliver be split into sliver neighbours (which makes
/// new slivers), within a budget of a few per sliver, because a fan of collinear slivers would
/// otherwise split without end. Slivers left after that are dropped, which may leave an open
/// edge; no grid of the searches in BENCHMARKS.md ("Topology and manifoldness") reaches it.
///
/// The vertices of every sliver looked at go to `touched` (pinch candidates). `work` holds
/// the buffers (edge table, queues); it is only scratch. `tags` (empty, or one per triangle)
/// follows the triangles: the halves of a split triangle keep its tag. A zero-area triangle
/// at a `pinned` vertex (empty, or one flag per vertex) is no sliver here: it stays.
pub(crate) fn split_slivers(
    p: &[[f32; 3]],
    tris: &mut Vec<[u32; 3]>,
    tags: &mut Vec<bool>,
    touched: &mut Vec<u32>,
    work: &mut SliverWork,
    pinned: &[bool],
) {
    let is_sliver = |t: [u32; 3]| {
        area2(p, t) == 0.0 && (pinned.is_empty() || !t.iter().any(|&v| pinned[v as usize]))
    };
    let mut pending = std::mem::take(&mut work.pending);
    pending.clear();
    pending.extend((0..tris.len()).filter(|&i| is_sliver(tris[i])));
    if pending.is_empty() {
        work.pending = pending;
        return;
    }
    let mut left = std::mem::take(&mut work.left);
    let mut others = std::mem::take(&mut work.others);
    let mut alive = std::mem::take(&mut work.alive);
    work.clear(3 * tris.len() / 2 + 16);
    for (i, t) in tris.iter().enumerate() {
        for k in 0..3 {
            work.push(t[k], t[(k + 1) % 3], i);
        }
    }
    alive.clear();
    alive.resize(tris.len(), true);
    // Splits into neighbours that are slivers themselves make new slivers; a few are allowed
    // (they resolve fans of two or three collinear slivers), bounded so fans cannot explode.
    let mut forced_budget = 4 * pending.len() + 8;
    let mut allow_forced = false;
    loop {
        let mut progress = false;
        left.clear();
        for &s in &pending {
            if !alive[s] {
                continue;
            }
            let t = tris[s];
            let d2 = |u: u32, v: u32| len2(sub(p[u as usize], p[v as usize]));
            // Edge (t[k+2], t[k]) is the longest; its opposite vertex t[k+1] is the middle.
            let k = (0..3)
                .max_by(|&x, &y| {
                    d2(t[(x + 2) % 3], t[x])
                        .total_cmp(&d2(t[(y + 2) % 3], t[y]))
                        .then(y.cmp(&x))
                })
                .expect("three edges");
            let (a, b, c) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
            touched.extend([a, b, c]);
            let has_ac = |u: [u32; 3]| (0..3).any(|e| key(u[e], u[(e + 1) % 3]) == key(a, c));
            others.clear();
            work.users(a, c, &mut others);
            others.retain(|&j| j != s && alive[j] && has_ac(tris[j]));
            // A twin (the same three vertices, the other way round: it runs a → c) cancels
            // with the sliver: both go, and every edge loses one use each way.
            let runs_ac = |u: [u32; 3]| (0..3).any(|e| u[e] == a && u[(e + 1) % 3] == c);
            if let Some(&twin) = others
                .iter()
                .find(|&&j| tris[j].contains(&b) && runs_ac(tris[j]))
            {
                for (i, t) in [(s, t), (twin, tris[twin])] {
                    alive[i] = false;
                    for k in 0..3 {
                        work.unlink(t[k], t[(k + 1) % 3], i);
                    }
                }
                progress = true;
                continue;
            }
            // A copy (the same three vertices, the same way round) is a neighbour like any
            // other whose split halves have no area (`[c, b, b]`, `[b, a, b]`): it goes.
            let forced = others
                .iter()
                .any(|&j| is_sliver(tris[j]) && !tris[j].contains(&b));
            if forced && (forced_budget == 0 || !allow_forced) {
                left.push(s);
                continue;
            }
            if forced {
                forced_budget -= 1;
            }
            alive[s] = false;
            for (u, v) in [(a, b), (b, c), (c, a)] {
                work.unlink(u, v, s);
            }
            for &j in &others {
                let u = tris[j];
                let Some(e) = (0..3).find(|&e| key(u[e], u[(e + 1) % 3]) == key(a, c)) else {
                    continue;
                };
                let (x, y, d) = (u[e], u[(e + 1) % 3], u[(e + 2) % 3]);
                if d == b {
                    alive[j] = false;
                    for k in 0..3 {
                        work.unlink(u[k], u[(k + 1) % 3], j);
                    }
                    continue;
                }
                work.unlink(x, y, j);
                work.unlink(y, d, j);
                tris[j] = [x, b, d];
                work.push(x, b, j);
                work.push(b, d, j);
                let n = tris.len();
                tris.push([b, y, d]);
                if !tags.is_empty() {
                    tags.push(tags[j]);
                }
                alive.push(true);
                for (u, v) in [(b, y), (y, d), (d, b)] {
                    work.push(u, v, n);
                }
                if forced {
                    // The split halves of a sliver are slivers: queue them.
                    for t in [j, n] {
                        if is_sliver(tris[t]) {
                            left.push(t);
                        }
                    }
                }
            }
            progress = true;
        }
        std::mem::swap(&mut pending, &mut left);
        pending.retain(|&t| alive[t]);
        pending.sort_unstable();
        pending.dedup();
        if pending.is_empty() {
            break;
        }
        if progress {
            // Clean splits first, again, after any progress.
            allow_forced = false;
        } else if allow_forced || forced_budget == 0 {
            break;
        } else {
            // No clean split left: allow forced ones (within the budget) for one round.
            allow_forced = true;
        }
    }
    let mut w = 0;
    for i in 0..tris.len() {
        if alive[i] && !is_sliver(tris[i]) {
            tris[w] = tris[i];
            if !tags.is_empty() {
                tags[w] = tags[i];
            }
            w += 1;
        }
    }
    tris.truncate(w);
    if !tags.is_empty() {
        tags.truncate(w);
    }
    // The queues swap roles each round, so the larger demand of a repeated call may fall on
    // either: both keep the larger capacity.
    let c = pending.capacity().max(left.capacity());
    pending.reserve(c - pending.len());
    left.reserve(c - left.len());
    work.pending = pending;
    work.left = left;
    work.others = others;
    work.alive = alive;
}

#[cfg(test)]
mod tests {
    use super::*;

    impl SliverWork {
        fn capacities(&self) -> [usize; 7] {
            [
                self.slots.capacity(),
                self.spare.capacity(),
                self.nodes.capacity(),
                self.pending.capacity(),
                self.left.capacity(),
                self.others.capacity(),
                self.alive.capacity(),
            ]
        }
    }

    /// Random fans of collinear points (a line with a few points off it, or small lattices)
    /// and random triangles over them, as review found them: a second call on the same
    /// input grows no buffer and gives the same triangles. (The queues swap roles each
    /// round, so without equal capacities the larger demand could fall on the smaller one.)
    #[test]
    fn a_repeated_call_grows_no_buffer() {
        let mut z = 0x9e37_79b9_7f4a_7c15u64;
        let mut below = |n: u64| {
            z ^= z << 13;
            z ^= z >> 7;
            z ^= z << 17;
            z % n
        };
        let mut split = 0;
        for case in 0..3000 {
            let kind = below(3);
            let mut p: Vec<[f32; 3]> = Vec::new();
            let want = 3 + below(30) as usize;
            for _ in 0..1000 {
                if p.len() == want {
                    break;
                }
                let v = match kind {
                    0 if below(4) == 0 => [below(3), 1 + below(2), below(2)],
                    0 => [below(12), 0, 0],
                    1 => [below(3), below(3), 0],
                    _ => [below(3), below(2), below(2)],
                }
                .map(|c| c as f32);
                if !p.contains(&v) {
                    p.push(v);
                }
            }
            let n = p.len() as u64;
            if n < 3 {
                continue;
            }
            let input: Vec<[u32; 3]> = (0..1 + below(if case % 2 == 0 { 60 } else { 300 }))
                .map(|_| {
                    let a = below(n);
                    let b = (a + 1 + below(n - 1)) % n;
                    let c = loop {
                        let c = below(n);
                        if c != a && c != b {
                            break c;
                        }
                    };
                    [a, b, c].map(|v| v as u32)
                })
                .collect();
            let mut work = SliverWork::default();
            let (mut tris, mut touched) = (input.clone(), Vec::new());
            split_slivers(&p, &mut tris, &mut Vec::new(), &mut touched, &mut work, &[]);
            split += usize::from(tris.len() != input.len());
            let (first, caps) = (tris.clone(), work.capacities());
            let (mut tris, mut touched) = (input, Vec::new());
            split_slivers(&p, &mut tris, &mut Vec::new(), &mut touched, &mut work, &[]);
            assert_eq!(work.capacities(), caps, "case {case}");
            assert_eq!(tris, first, "case {case}");
        }
        assert!(split > 100, "{split} cases changed");
    }
}
