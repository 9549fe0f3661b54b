//! The generator brick cache: the generator's values of unedited bricks, kept from the chunk
//! fills that computed them anyway, so that an edit's new bricks and its chunks' halos are
//! copied instead of generated again (brick generation is most of an edit's cost).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use loam_field::{BRICK_SAMPLES, BrickKey};

/// Values of one generated brick (32³, x fastest).
pub(crate) type Values = Arc<[f32]>;

#[derive(Default)]
struct Inner {
    bricks: BTreeMap<BrickKey, Values>,
    /// Viewer positions in brick units: the farthest brick is evicted first.
    viewers: Vec<[f64; 3]>,
}

/// A bounded map from brick key to the generator's values there, shared by the workers and
/// the world. Values are only ever inserted from fills of bricks that had no edit brick, so
/// they equal the generator's bit for bit.
pub(crate) struct GeneratorCache {
    inner: Mutex<Inner>,
    capacity: usize,
}

impl GeneratorCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::default(),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, key: BrickKey) -> Option<Values> {
        if self.capacity == 0 {
            return None;
        }
        self.lock().bricks.get(&key).cloned()
    }

    pub fn contains(&self, key: BrickKey) -> bool {
        self.capacity > 0 && self.lock().bricks.contains_key(&key)
    }

    /// Keeps `values` for `key`, evicting the bricks farthest from every viewer beyond the
    /// capacity.
    pub fn insert(&self, key: BrickKey, values: Values) {
        if self.capacity == 0 {
            return;
        }
        let mut inner = self.lock();
        inner.bricks.insert(key, values);
        if inner.bricks.len() > self.capacity {
            let far = {
                let viewers = &inner.viewers;
                let dist = |k: &BrickKey| {
                    let c = [k.x, k.y, k.z].map(|v| f64::from(v) + 0.5);
                    viewers
                        .iter()
                        .map(|v| (0..3).map(|i| (c[i] - v[i]).powi(2)).sum::<f64>())
                        .fold(f64::INFINITY, f64::min)
                };
                inner
                    .bricks
                    .keys()
                    .max_by(|a, b| dist(a).total_cmp(&dist(b)).then_with(|| a.cmp(b)))
                    .copied()
            };
            if let Some(k) = far {
                inner.bricks.remove(&k);
            }
        }
    }

    /// Forgets `key` (an edit brick exists there now, so fills read that instead).
    pub fn remove(&self, key: BrickKey) {
        self.lock().bricks.remove(&key);
    }

    pub fn set_viewers(&self, viewers: Vec<[f64; 3]>) {
        self.lock().viewers = viewers;
    }

    /// Bricks held.
    pub fn len(&self) -> usize {
        self.lock().bricks.len()
    }
}

/// Copies brick `key`'s 32³ samples out of a grid of `n³` samples whose lowest sample is
/// `grid_min` (x fastest); the brick must lie inside the grid.
pub(crate) fn brick_from_grid(
    values: &[f32],
    n: usize,
    grid_min: [i32; 3],
    key: BrickKey,
) -> Values {
    let b = BRICK_SAMPLES as usize;
    let o = [key.x, key.y, key.z]
        .iter()
        .zip(grid_min)
        .map(|(k, g)| (k * BRICK_SAMPLES - g) as usize)
        .collect::<Vec<_>>();
    let mut out = Vec::with_capacity(b * b * b);
    for z in 0..b {
        for y in 0..b {
            let row = o[0] + n * ((o[1] + y) + n * (o[2] + z));
            out.extend_from_slice(&values[row..row + b]);
        }
    }
    out.into()
}
