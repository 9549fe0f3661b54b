//! # loam-web
//!
//! Loam's editor in a browser page: the native editor ([`loam_bevy::editor`]) built for
//! `wasm32-unknown-unknown`, drawing with WebGL2 into the page's canvas. Natively this crate
//! is empty; `tools/web_build.sh OUT` builds the bundle (the wasm, its JavaScript glue from
//! `wasm-bindgen`, and `page/`), and `loam serve --web OUT` serves it.
//!
//! - **Alone.** The page keeps its world in the browser: the world file itself, held in
//!   memory by SQLite (`loam_store::Store::create_in_memory`, `Store::from_image`) and
//!   its bytes put into IndexedDB half a second after the last edit (`page/loam.js`), so a
//!   reload opens the world with every edit and its undo history. The bytes are a world
//!   file: the page downloads them as `world.loam` (`loam edit world.loam` opens it) and
//!   opens a `.loam` file the user picks. A saved world that does not open (damaged, of
//!   another build) is kept aside under another key and a fresh world starts, with a
//!   message on the page.
//! - **No threads.** The chunk pipeline builds its jobs in each frame's update within a
//!   budget, edited chunks first (`loam_world::WorldSettings::main_thread`).
//! - **For tests**, the page's module exports [`status`] (the field hash, the log's end,
//!   what is drawn) and [`world_bytes`].
//!
//! Joining a server from the page (`?connect=…`) is not built yet: the page says so and
//! edits alone.

#[cfg(target_arch = "wasm32")]
mod page;

#[cfg(target_arch = "wasm32")]
pub use page::{check_world, start, status, world_bytes};
