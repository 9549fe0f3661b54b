//! Falloff profiles (filled in by the sculpting work).
