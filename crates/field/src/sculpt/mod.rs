//! Sculpting: falloff profiles, CSG shape SDFs with hard and soft blends, and redistancing.

pub mod falloff;
pub mod redistance;
pub mod shapes;
