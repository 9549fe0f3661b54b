//! Shape SDFs (filled in by the sculpting work).
