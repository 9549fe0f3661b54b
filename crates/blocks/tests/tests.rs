//! loam-blocks integration tests, one binary.

mod damage;
mod determinism;
mod footing;
mod islands;
mod ops;
mod persist;
mod replica;
mod rubble;
mod support;
mod util;
mod vox;
