//! loam-store tests (one binary).

mod crash;
mod store;
