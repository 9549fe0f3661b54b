//! loam-store tests (one binary).

mod crash;
mod migrate;
mod store;
