//! loam-world integration tests (one binary).

mod util;

mod lod;
mod pipeline;
mod props;
