//! loam-store tests (one binary).

mod backup;
mod bake_parts;
mod blocks;
mod busy;
mod checkpoint;
mod crash;
mod image;
mod migrate;
mod store;
