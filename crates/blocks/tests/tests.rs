//! loam-blocks integration tests, one binary.

mod damage;
mod determinism;
mod ops;
mod rubble;
mod support;
mod util;
mod vox;
