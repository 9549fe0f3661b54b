//! loam-store tests (one binary).

mod store;
