//! loam-world integration tests (one binary).

mod util;

mod pipeline;
mod props;
