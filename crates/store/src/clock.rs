//! The clocks the store reads (busy-wait deadlines, the file's created and modified times):
//! std's, or on wasm32-unknown-unknown, where std has none and panics, the page's
//! (`web_time`, the same API).

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use std::time::{Instant, SystemTime, UNIX_EPOCH};
#[cfg(target_arch = "wasm32")]
pub(crate) use web_time::{Instant, SystemTime, UNIX_EPOCH};
