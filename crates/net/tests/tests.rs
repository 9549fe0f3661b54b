//! loam-net's integration tests, one binary: protocol round trips and the decoders fuzzed,
//! the server's limits, eight clients converging through disconnects, and a killed server.

mod converge;
mod crash;
mod limits;
mod predict;
mod protocol;
mod util;
