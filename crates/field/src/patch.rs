//! Bricks handed from one field to another of the same world: a network client's field
//! changed by the server's ops, taken by the editor's chunk pipeline.
//!
//! Taking a whole field ([`Field::clone`]) would make both fields share one map of bricks,
//! so the next write on either side copies that map (every brick's entry): a connected
//! editor paid that on the client thread for every op the server sent. A [`BrickPatch`]
//! carries only the named bricks (shared, not copied: a brick is immutable once written),
//! and [`Field::apply_patch`] writes them into the receiving field's own map.

use std::sync::Arc;

use crate::brick::Brick;
use crate::coords::BrickKey;
use crate::field::{Field, FieldSettings, next_revision, widen_column};
use crate::generator::Generator;

/// Some bricks of a field, by key, to put into another field of the same world
/// ([`Field::patch`], [`Field::apply_patch`]). `None` for a key the source field holds no
/// brick at (its samples are the generator's).
#[derive(Debug, Clone)]
pub struct BrickPatch {
    settings: FieldSettings,
    generator: Arc<Generator>,
    bricks: Vec<(BrickKey, Option<Arc<Brick>>)>,
}

impl BrickPatch {
    /// The keys the patch names, ascending.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = BrickKey> + '_ {
        self.bricks.iter().map(|(k, _)| *k)
    }

    /// How many bricks it names.
    pub fn len(&self) -> usize {
        self.bricks.len()
    }

    /// Whether it names no brick.
    pub fn is_empty(&self) -> bool {
        self.bricks.is_empty()
    }
}

/// Why [`Field::apply_patch`] refused a patch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PatchError {
    /// The patch comes from a field with other settings.
    #[error("the patch comes from a field with other settings ({theirs:?}, not {ours:?})")]
    Settings {
        /// The receiving field's settings.
        ours: FieldSettings,
        /// The settings of the field the patch was taken from.
        theirs: FieldSettings,
    },
    /// The patch comes from a field of another generator (not the same `Arc`: fields of one
    /// world are built one from the other, e.g. with `Clone`).
    #[error("the patch comes from a field of another generator")]
    Generator,
}

// Settings of a field are validated finite numbers (no NaN), so equality is an equivalence.
impl Eq for PatchError {}

impl Field {
    /// The bricks at `keys` (duplicates taken once), shared with this field, for
    /// [`Field::apply_patch`] on another field of the same world. O(k log n) for k keys.
    pub fn patch(&self, keys: impl IntoIterator<Item = BrickKey>) -> BrickPatch {
        let mut keys: Vec<BrickKey> = keys.into_iter().collect();
        keys.sort_unstable();
        keys.dedup();
        BrickPatch {
            settings: self.settings,
            generator: self.generator.clone(),
            bricks: keys
                .into_iter()
                .map(|k| (k, self.bricks.get(&k).cloned()))
                .collect(),
        }
    }

    /// Puts the patch's bricks into this field in place of its own at the same keys
    /// (removing those the patch has none at), without sharing the map of bricks with the
    /// field the patch came from. Reads at the patched bricks then give what the source
    /// field gave when the patch was taken, bit for bit; every other brick is untouched.
    /// Returns the keys whose brick differed (by brick id, or present on one side only), in
    /// ascending order; when none did, the field (and its revision) is unchanged.
    ///
    /// Bricks the patch brings decoded count as this field's most recently written (packed
    /// beyond [`Field::hot_capacity`], as after an op).
    ///
    /// # Errors
    /// [`PatchError`] when the patch comes from a field with other settings or another
    /// generator; nothing changes then.
    pub fn apply_patch(&mut self, patch: &BrickPatch) -> Result<Vec<BrickKey>, PatchError> {
        if patch.settings != self.settings {
            return Err(PatchError::Settings {
                ours: self.settings,
                theirs: patch.settings,
            });
        }
        if !Arc::ptr_eq(&patch.generator, &self.generator) {
            return Err(PatchError::Generator);
        }
        let changed: Vec<&(BrickKey, Option<Arc<Brick>>)> = patch
            .bricks
            .iter()
            .filter(|(k, theirs)| match (self.bricks.get(k), theirs) {
                (None, None) => false,
                (Some(a), Some(b)) => a.id() != b.id(),
                _ => true,
            })
            .collect();
        if changed.is_empty() {
            return Ok(Vec::new());
        }
        self.revision = next_revision();
        let map = Arc::make_mut(&mut self.bricks);
        let mut removed = Vec::new();
        for (key, brick) in &changed {
            self.hot.retain(|k| k != key);
            match brick {
                Some(b) => {
                    if b.is_hot() {
                        self.hot.push(*key);
                    }
                    map.insert(*key, b.clone());
                }
                None => {
                    map.remove(key);
                    removed.push(*key);
                }
            }
        }
        let columns = Arc::make_mut(&mut self.columns);
        for (key, brick) in &changed {
            if brick.is_some() {
                widen_column(columns, *key);
            }
        }
        // A column loses a layer only where a brick went: narrow it to the bricks left.
        for key in removed {
            let Some(&(lo, hi)) = columns.get(&(key.x, key.z)) else {
                continue;
            };
            let held = |y: i32| map.contains_key(&BrickKey::new(key.x, y, key.z));
            match (lo..=hi).find(|&y| held(y)) {
                None => {
                    columns.remove(&(key.x, key.z));
                }
                Some(lo) => {
                    let hi = (lo..=hi).rev().find(|&y| held(y)).expect("lo is held");
                    columns.insert((key.x, key.z), (lo, hi));
                }
            }
        }
        self.pack_beyond(self.hot_capacity);
        Ok(changed.into_iter().map(|(k, _)| *k).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsgMode, EditOp, NoiseTerrainSettings};

    fn field() -> Field {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
    }

    /// Digs a ball of radius `r` on the ground at `(x, 0)`; the keys of the bricks it wrote.
    fn dig(f: &mut Field, x: f64, r: f64) -> Vec<BrickKey> {
        let y = f.generator().surface_height(x, 0.0);
        let op = EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, y, 0.0],
            radius: r,
            material: 0,
            blend: 0.0,
        };
        let out = f.apply(&op).unwrap();
        let mut keys = Vec::new();
        crate::field::for_bricks_in(out.changed.expect("it changed samples"), |k, _| {
            keys.push(k)
        });
        keys
    }

    #[test]
    fn a_patch_of_the_changed_bricks_makes_the_fields_equal() {
        let base = field();
        let mut theirs = base.clone();
        let mut ours = base.clone();
        let mut named = dig(&mut theirs, 0.0, 5.0);
        named.extend(dig(&mut theirs, 40.0, 3.0));
        assert_ne!(ours.hash(), theirs.hash());
        let changed = ours.apply_patch(&theirs.patch(named.clone())).unwrap();
        assert!(!changed.is_empty());
        assert!(changed.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ours.hash(), theirs.hash());
        assert_eq!(ours.brick_count(), theirs.brick_count());
        for k in &named {
            assert_eq!(ours.edited_layers(k.x, k.z), theirs.edited_layers(k.x, k.z));
        }
        // Applied again: nothing differs, nothing changes.
        let revision = ours.revision;
        assert!(ours.apply_patch(&theirs.patch(named)).unwrap().is_empty());
        assert_eq!(ours.revision, revision);
    }

    #[test]
    fn a_patch_without_a_brick_removes_it_and_narrows_its_column() {
        let plain = field();
        let mut back = plain.clone();
        let keys = dig(&mut back, 0.0, 5.0);
        assert!(back.patch(std::iter::empty()).is_empty());
        let removed = back.apply_patch(&plain.patch(keys.clone())).unwrap();
        assert_eq!(removed.len(), keys.len());
        assert_eq!(back.brick_count(), 0);
        for k in &keys {
            assert_eq!(back.edited_layers(k.x, k.z), None);
        }
        assert_eq!(back.hash(), plain.hash());
        for k in &keys {
            let p = crate::SamplePos::new(k.x * 32 + 5, k.y * 32 + 7, k.z * 32 + 9);
            assert_eq!(back.sample(p).to_bits(), plain.sample(p).to_bits());
        }
    }

    #[test]
    fn a_patch_of_another_world_is_refused_and_changes_nothing() {
        let mut ours = field();
        let mut theirs = field();
        let keys = dig(&mut theirs, 0.0, 4.0);
        let before = ours.hash();
        assert_eq!(
            ours.apply_patch(&theirs.patch(keys.clone())),
            Err(PatchError::Generator)
        );
        let settings = FieldSettings {
            voxel_size: 0.5,
            ..Default::default()
        };
        let mut other = Field::new(settings, ours.generator_arc().clone()).unwrap();
        let k2 = dig(&mut other, 0.0, 4.0);
        assert!(matches!(
            ours.apply_patch(&other.patch(k2)),
            Err(PatchError::Settings { .. })
        ));
        assert_eq!(ours.hash(), before);
    }

    #[test]
    fn the_patched_field_does_not_share_the_map_of_bricks() {
        let base = field();
        let mut theirs = base.clone();
        let mut ours = base.clone();
        dig(&mut ours, 100.0, 2.0); // ours has its own map from here
        let named = dig(&mut theirs, 0.0, 5.0);
        ours.apply_patch(&theirs.patch(named)).unwrap();
        assert!(!Arc::ptr_eq(&ours.bricks, &theirs.bricks));
    }
}
