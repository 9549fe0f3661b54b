//! Integration tests of loam-field, one binary (one link for all of them).

mod util;

mod bricks;
mod cases;
mod codec;
mod edit_samples;
mod edits;
mod generator;
mod generator_cache;
mod hash;
mod heightmap;
mod history;
mod raycast;
mod reference;
mod sculpt;
