//! loam-server's integration tests (with loam-client as the other end), one binary: protocol round trips and the decoders fuzzed,
//! the server's limits, eight clients converging through disconnects, a killed server, and
//! blocks and collapses ordered by the server, presence, undo over the network, a world
//! store another process holds busy under load, and one that fails under the server.

mod backup;
mod blocks;
mod budget;
mod catch_up;
mod cluster;
mod converge;
mod crash;
mod editor_world;
mod failed_start;
mod floods;
mod limits;
mod outbox;
mod predict;
mod presence;
mod protocol;
mod resume_key;
mod store_failure;
mod undo;
mod util;
mod web;
