//! Fixed colliders named by the caller: held blocks, which falling pieces, rubble and
//! characters collide with, and which impacts name.

use crate::error::PhysicsError;
use crate::parts::Part;
use crate::world::{PhysicsWorld, fixed_tag};

/// A fixed collider's name, chosen by the caller (loam-blocks uses its block ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FixedId(pub u64);

impl PhysicsWorld {
    /// Puts a fixed (immovable) collider named `id` in the world: `part`'s shape at
    /// `position + part.offset` (world metres), axis-aligned; `part.density` is ignored. An
    /// existing collider of that id is replaced. Scene queries see it at once; bodies it
    /// appears under or in are woken.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] or [`PhysicsError::OutOfRange`] for a bad part (nothing
    /// changes).
    pub fn set_fixed(
        &mut self,
        id: FixedId,
        position: [f32; 3],
        part: &Part,
    ) -> Result<(), PhysicsError> {
        crate::error::check_finite("position", &position)?;
        let mut at = part.clone();
        at.offset = [0, 1, 2].map(|i| position[i] + part.offset[i]);
        let collider = at.collider(true)?.user_data(fixed_tag(id)).build();
        self.remove_fixed(id);
        let aabb = collider.compute_aabb();
        let handle = self.insert_collider_now(collider, None);
        self.fixed.insert(id, handle);
        self.wake_bodies_in(aabb);
        Ok(())
    }

    /// Removes the fixed collider `id`; bodies resting on it wake. Returns whether it
    /// existed.
    pub fn remove_fixed(&mut self, id: FixedId) -> bool {
        match self.fixed.remove(&id) {
            Some(h) => self.rapier.remove_collider(h).is_some(),
            None => false,
        }
    }

    /// Whether a fixed collider `id` exists.
    pub fn has_fixed(&self, id: FixedId) -> bool {
        self.fixed.contains_key(&id)
    }

    /// Number of fixed colliders.
    pub fn fixed_count(&self) -> usize {
        self.fixed.len()
    }
}
