//! loam-store tests (one binary).

mod bake_parts;
mod blocks;
mod crash;
mod migrate;
mod store;
