//! loam-physics integration tests, one binary.

mod bodies;
mod character;
mod compound;
mod determinism;
mod errors;
mod terrain;
mod util;
