//! loam-blocks integration tests, one binary.

mod damage;
mod determinism;
mod islands;
mod ops;
mod persist;
mod rubble;
mod support;
mod util;
mod vox;
