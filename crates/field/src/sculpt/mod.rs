//! Sculpting: falloff profiles, CSG shape SDFs with hard and soft blends, redistancing, and
//! the planning of shape and brush ops.

pub mod falloff;
pub(crate) mod plan;
pub mod redistance;
pub mod shapes;
