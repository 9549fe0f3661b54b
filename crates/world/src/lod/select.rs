//! Which chunks of which level the viewers see: an octree over the view (a clipmap-like set of
//! rings, one per level, around each viewer), balanced by the 2:1 rule, with hysteresis.

use std::collections::BTreeSet;

use super::key::{LodKey, MAX_LEVELS};

/// Settings of the level-of-detail selection. Distances are metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LodSettings {
    /// Levels of detail, `[1, MAX_LEVELS]`: chunks of level 0 to `levels − 1`.
    pub levels: u8,
    /// Level 0 is used within this distance of a viewer (metres); level `k` within
    /// `2^k` times it. A level-`k` chunk (`k ≥ 1`) is split into eight level-`k−1` chunks when
    /// its box is nearer a viewer than `lod0_radius · 2^(k−1)`.
    pub lod0_radius: f64,
    /// Chunks of the coarsest level are shown where their box is within this distance of a
    /// viewer (metres).
    pub view_distance: f64,
    /// Hysteresis as a fraction of each distance, `[0, 1]`: a chunk that was split stays split
    /// until its distance exceeds the split distance times `1 + hysteresis`, and a coarsest
    /// chunk that was shown stays until beyond `view_distance · (1 + hysteresis)`.
    pub hysteresis: f64,
}

impl Default for LodSettings {
    /// Five levels, level 0 within 128 m, 2048 m view, 25 % hysteresis.
    fn default() -> Self {
        Self {
            levels: 5,
            lod0_radius: 128.0,
            view_distance: 2048.0,
            hysteresis: 0.25,
        }
    }
}

/// The chunks to show for viewers at `viewers` (world metres) with level-0 voxels of
/// `voxel_size` metres, given the `previous` selection (empty for none): a tiling of the
/// coarsest chunks within the view distance by an octree (no overlap, no gap), refined by
/// distance to the nearest viewer, then balanced so that chunks touching by a face, an edge or
/// a corner differ by at most one level (the 2:1 rule, Lengyel 2010 §4.1; edges and corners
/// too, so the transition cells of face neighbours meet). A pure function of its arguments,
/// ascending by key. Non-finite viewer positions are ignored.
///
/// # Panics
/// If `settings.levels` is not in `[1, MAX_LEVELS]`.
pub fn select(
    viewers: &[[f64; 3]],
    voxel_size: f64,
    settings: &LodSettings,
    previous: &BTreeSet<LodKey>,
) -> BTreeSet<LodKey> {
    assert!(
        (1..=MAX_LEVELS).contains(&settings.levels),
        "levels {} not in [1, {MAX_LEVELS}]",
        settings.levels
    );
    let top = settings.levels - 1;
    let grow = 1.0 + settings.hysteresis.clamp(0.0, 1.0);
    let viewers: Vec<[f64; 3]> = viewers
        .iter()
        .filter(|p| p.iter().all(|c| c.is_finite()))
        .copied()
        .collect();
    let near = |k: LodKey| {
        viewers
            .iter()
            .map(|&p| k.distance(p, voxel_size))
            .fold(f64::INFINITY, f64::min)
    };
    // Chunks the previous selection had split (an ancestor of a previous chunk), and the
    // coarsest chunks it covered.
    let mut split_before = BTreeSet::new();
    for &p in previous {
        for l in p.level + 1..=top.max(p.level) {
            split_before.insert(p.ancestor(l));
        }
    }
    let roots = roots(&viewers, voxel_size, settings, top, grow, |k| {
        split_before.contains(&k) || previous.contains(&k)
    });
    let mut leaves = BTreeSet::new();
    let mut stack: Vec<LodKey> = roots.into_iter().rev().collect();
    while let Some(k) = stack.pop() {
        let split = k.level > 0 && {
            let d = near(k);
            let t = settings.lod0_radius * f64::from(1u32 << (k.level - 1));
            d < t || (split_before.contains(&k) && d < t * grow)
        };
        match k.children().filter(|_| split) {
            Some(ch) => stack.extend(ch.into_iter().rev()),
            None => {
                leaves.insert(k);
            }
        }
    }
    balance(&mut leaves, top);
    leaves
}

/// The chunk of `level` holding world position `p` (metres, level-0 voxels of `voxel_size`),
/// or `None` where `p` is not finite or outside the sample range: the one conversion of
/// loam-field ([`loam_field::coords::world_to_level_chunk`], case C13), used by the selection
/// and the crack metric alike.
pub(crate) fn level_key(p: [f64; 3], voxel_size: f64, level: u8) -> Option<LodKey> {
    loam_field::coords::world_to_level_chunk(p, voxel_size, level)
        .ok()
        .map(|c| LodKey::new(level, c))
}

/// [`level_key`] at level 0.
pub(crate) fn level0_key(p: [f64; 3], voxel_size: f64) -> Option<LodKey> {
    level_key(p, voxel_size, 0)
}

/// The coarsest chunks to tile: within the view distance of a viewer, or within it grown by
/// the hysteresis where `was_shown`.
fn roots(
    viewers: &[[f64; 3]],
    voxel_size: f64,
    settings: &LodSettings,
    top: u8,
    grow: f64,
    was_shown: impl Fn(LodKey) -> bool,
) -> BTreeSet<LodKey> {
    let mut out = BTreeSet::new();
    let reach = settings.view_distance.max(0.0) * grow;
    for p in viewers {
        let key = |d: f64| level_key(p.map(|c| c + d), voxel_size, top).map(|k| k.xyz());
        let (Some(lo), Some(hi)) = (key(-reach), key(reach)) else {
            continue;
        };
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let k = LodKey::new(top, [x, y, z]);
                    let d = k.distance(*p, voxel_size);
                    if d <= settings.view_distance || (d <= reach && was_shown(k)) {
                        out.insert(k);
                    }
                }
            }
        }
    }
    out
}

/// The 26 offsets to the chunks touching a chunk by a face, an edge or a corner.
pub(crate) fn neighbour_offsets() -> impl Iterator<Item = [i32; 3]> {
    (0..27)
        .map(|i| [i % 3 - 1, (i / 3) % 3 - 1, i / 9 - 1])
        .filter(|d| *d != [0, 0, 0])
}

/// The chunk of `leaves` that covers `k` (`k` itself or an ancestor up to `top`); `None` where
/// `k` is outside the tiling or split finer.
pub fn covering(leaves: &BTreeSet<LodKey>, k: LodKey, top: u8) -> Option<LodKey> {
    (k.level..=top.max(k.level))
        .map(|l| k.ancestor(l))
        .find(|a| leaves.contains(a))
}

/// Splits chunks until no chunk touches one more than one level finer.
fn balance(leaves: &mut BTreeSet<LodKey>, top: u8) {
    loop {
        let mut split = BTreeSet::new();
        for &k in leaves.iter().filter(|k| k.level + 2 <= top) {
            for d in neighbour_offsets() {
                if let Some(c) = covering(leaves, k.offset(d), top)
                    && c.level >= k.level + 2
                {
                    split.insert(c);
                }
            }
        }
        if split.is_empty() {
            return;
        }
        for c in split {
            leaves.remove(&c);
            leaves.extend(c.children().expect("level ≥ 2"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LodSettings {
        LodSettings {
            levels: 4,
            lod0_radius: 64.0,
            view_distance: 600.0,
            hysteresis: 0.25,
        }
    }

    /// C13: the selection's chunk of a viewer is the one conversion's (loam-field's
    /// `world_to_level_chunk`): with a view distance of 0 the roots around a viewer are the
    /// one chunk holding it, at the positions that once floored wrongly and at 10⁵ random
    /// positions within ±10⁶ m (a tenth of them on chunk borders), for levels 0 to 3.
    #[test]
    fn case_c13_selection_keys_use_the_one_conversion() {
        let st = LodSettings {
            view_distance: 0.0,
            ..settings()
        };
        let only = |p: [f64; 3], vs: f64, top: u8| {
            let r = roots(&[p], vs, &st, top, 1.0, |_| false);
            assert_eq!(r.len(), 1, "{p:?} at {vs}, level {top}: {r:?}");
            r.into_iter().next().unwrap()
        };
        assert_eq!(only([10.559999999999999, 0.0, 0.0], 0.03, 0).x, 11);
        assert_eq!(only([-34.56, 0.0, 0.0], 0.03, 0).x, -36);
        assert_eq!(only([137.6, 0.0, 0.0], 0.1, 0).x, 43);
        let mut z = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            z ^= z << 13;
            z ^= z >> 7;
            z ^= z << 17;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6
        };
        for i in 0..100_000 {
            let (vs, top) = ([0.03, 0.1, 0.5, 1.0][i % 4], (i % 7 % 4) as u8);
            let side = 32.0 * f64::from(1u32 << top) * vs;
            let p = if i % 10 == 0 {
                [next(), next(), next()].map(|c| (c / side).round() * side)
            } else {
                [next(), next(), next()]
            };
            let want = loam_field::coords::world_to_level_chunk(p, vs, top).unwrap();
            assert_eq!(only(p, vs, top), LodKey::new(top, want), "{p:?} at {vs}");
            assert_eq!(level_key(p, vs, top), Some(LodKey::new(top, want)));
        }
    }

    /// Exactly once: no chunk lies inside another, and the volumes add up to the roots'.
    fn assert_tiling(s: &BTreeSet<LodKey>, top: u8) {
        let mut roots = BTreeSet::new();
        let mut volume = 0i128;
        for &k in s {
            for l in k.level + 1..=top {
                assert!(
                    !s.contains(&k.ancestor(l)),
                    "{k:?} inside {:?}",
                    k.ancestor(l)
                );
            }
            roots.insert(k.ancestor(top));
            volume += i128::from(k.size()).pow(3);
        }
        let root_volume = roots.len() as i128 * i128::from(LodKey::new(top, [0; 3]).size()).pow(3);
        assert_eq!(volume, root_volume, "gaps");
    }

    fn assert_two_to_one(s: &BTreeSet<LodKey>, top: u8) {
        for &k in s {
            for d in neighbour_offsets() {
                let n = k.offset(d);
                if let Some(c) = covering(s, n, top) {
                    assert!(c.level <= k.level + 1, "{k:?} touches {c:?}");
                }
            }
        }
    }

    #[test]
    fn tiles_exactly_once_with_the_two_to_one_rule_for_several_viewers() {
        let st = settings();
        let viewers = [
            [10.0, 30.0, -5.0],
            [700.0, -20.0, 300.0],
            [-33.3, 250.0, 90.0],
        ];
        let s = select(&viewers, 1.0, &st, &BTreeSet::new());
        assert_tiling(&s, 3);
        assert_two_to_one(&s, 3);
        // Level 0 next to every viewer, the coarsest level far away.
        for v in viewers {
            let k0 = LodKey::new(0, v.map(|c| (c / 32.0).floor() as i32));
            assert_eq!(covering(&s, k0, 3), Some(k0));
        }
        let levels: BTreeSet<u8> = s.iter().map(|k| k.level).collect();
        assert_eq!(levels, BTreeSet::from([0, 1, 2, 3]));
        // Nothing beyond the view distance of every viewer.
        for k in &s {
            let d = viewers
                .iter()
                .map(|&v| k.distance(v, 1.0))
                .fold(f64::INFINITY, f64::min);
            assert!(d <= 600.0, "{k:?} at {d}");
        }
        // Deterministic: the same arguments give the same set, and the order of viewers does not
        // matter.
        let mut rev = viewers;
        rev.reverse();
        assert_eq!(select(&rev, 1.0, &st, &BTreeSet::new()), s);
    }

    #[test]
    fn random_viewers_always_tile_and_balance() {
        let mut st = settings();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 2000) as f64 - 1000.0
        };
        let mut prev = BTreeSet::new();
        for round in 0..12 {
            st.levels = 2 + round % 4;
            let viewers: Vec<[f64; 3]> = (0..1 + round % 3)
                .map(|_| [next(), next() / 4.0, next()])
                .collect();
            if round % 4 == 0 {
                prev.clear();
            }
            let s = select(&viewers, 0.5, &st, &prev);
            assert_tiling(&s, st.levels - 1);
            assert_two_to_one(&s, st.levels - 1);
            prev = s;
        }
    }

    #[test]
    fn hysteresis_keeps_levels_when_a_viewer_oscillates() {
        let st = settings();
        // Level 1 chunk [64, 128) along x: split when a viewer is nearer than 64 m.
        let at = |x: f64| [[x, 40.0, 40.0]];
        let base = select(&at(0.0), 1.0, &st, &BTreeSet::new());
        // Across the boundary: x = 0.5 puts chunk (1, [1, 0, 0]) at 63.5 m (split) and x = -0.5
        // at 64.5 m (not split without hysteresis).
        let near = select(&at(0.5), 1.0, &st, &base);
        let far_fresh = select(&at(-0.5), 1.0, &st, &BTreeSet::new());
        let k1 = LodKey::new(1, [1, 0, 0]);
        assert!(!near.contains(&k1) && near.contains(&LodKey::new(0, [2, 1, 1])));
        assert!(
            far_fresh.contains(&k1),
            "without history the chunk is coarse"
        );
        // With history, oscillating settles after one swing: the chunks refined on either side
        // stay refined while the viewer stays within the margin.
        let settled = select(&at(-0.5), 1.0, &st, &near);
        assert!(!settled.contains(&k1), "kept split within the margin");
        let mut s = settled.clone();
        for i in 0..6 {
            s = select(&at(if i % 2 == 0 { 0.5 } else { -0.5 }), 1.0, &st, &s);
            assert!(s == settled, "step {i} changed the selection");
        }
        // Without hysteresis the same swing flips the chunk.
        let st0 = LodSettings {
            hysteresis: 0.0,
            ..st
        };
        assert!(select(&at(-0.5), 1.0, &st0, &settled).contains(&k1));
        // Beyond the margin (64 · 1.25 = 80 m) it coarsens.
        let gone = select(&at(-17.0), 1.0, &st, &near);
        assert!(gone.contains(&k1));
        assert_tiling(&gone, 3);
    }
}
