//! loam-store tests (one binary).

mod blocks;
mod crash;
mod migrate;
mod store;
