//! [`WorldFile`]: the world file (loam-store) an app's edits go to, as they happen, and
//! baked when the app exits. The format and what a save keeps are [`crate::blocks::persist`]'s.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use bevy::prelude::*;
use loam_field::{Field, FieldSettings};
use loam_store::{Store, StoreError};
use loam_world::{World, WorldError, WorldSettings};

use crate::blocks::{LoamBlocks, persist};
use crate::walk::Physics;
use crate::world::LoamWorld;

/// A world file the app writes to. With one inserted, [`crate::LoamPlugin`] appends every op
/// of a frame (terrain ops applied through [`LoamWorld::apply`], and block ops) to its log at
/// the end of that frame ([`crate::LoamSet::Save`]), and bakes the world into it (bricks,
/// history, blocks) when the app exits. [`WorldFile::save`] bakes at any other time.
///
/// Open one with [`WorldFile::open_or_create`]; `loam edit FILE` opens the same files.
#[derive(Resource)]
pub struct WorldFile {
    /// Behind a mutex: a resource must be `Sync`, an SQLite connection is not.
    store: Mutex<Store>,
    /// Why the last append failed, until taken ([`WorldFile::take_error`]).
    error: Option<WorldFileError>,
}

/// Why a world file could not be opened, written or saved.
#[derive(Debug, thiserror::Error)]
pub enum WorldFileError {
    /// The file itself (SQLite, the format, a lock held by another process).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The world could not be made from what the file holds.
    #[error(transparent)]
    World(#[from] WorldError),
    /// The generator JSON names a DEM that cannot be read (for its BLAKE3, which the file
    /// records so that `loam edit` can check it rebuilds the same terrain).
    #[error("the world's DEM")]
    Dem(#[from] loam_session::GeneratorSpecError),
    /// The file was made for another generator than the one given.
    #[error("the world file was made by another generator: it holds {held}, not {given}")]
    OtherGenerator {
        /// The generator description the file holds.
        held: String,
        /// The one given.
        given: String,
    },
    /// The file was made with other field settings than the field given.
    #[error(
        "the world file holds other field settings ({held:?}) than the field given ({given:?})"
    )]
    OtherFieldSettings {
        /// The settings the file holds.
        held: Box<FieldSettings>,
        /// The given field's.
        given: Box<FieldSettings>,
    },
    /// [`WorldFile::save`] without the app's blocks, on a file that holds blocks or block
    /// ops: the bake would replace them with an empty block world. Pass the `LoamBlocks`
    /// and `Physics` resources.
    #[error(
        "the world file holds blocks ({held} held blocks and pieces, {block_ops} block ops in the log): save it with the app's LoamBlocks, or they would be dropped"
    )]
    BlocksNotGiven {
        /// Block ops in the file's log.
        block_ops: u64,
        /// Held blocks and pieces in its blocks snapshot.
        held: u64,
    },
    /// The file's blocks snapshot does not decode.
    #[error("the world file's blocks snapshot does not decode")]
    BlocksSnapshot(#[source] loam_blocks::BlockError),
    /// A thread panicked while it held the file.
    #[error("the world file's lock is poisoned")]
    Poisoned,
}

/// What [`WorldFile::save`] baked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    /// Bricks written now (changed since the last bake: none after a save with no edit
    /// since).
    pub bricks: usize,
    /// Baked bricks the file holds now, this bake's and the earlier ones' (`None` when the
    /// file could not be read back for the count).
    pub bricks_in_file: Option<u64>,
    /// Held blocks in the snapshot.
    pub blocks: usize,
    /// The last op's sequence number the bake covers.
    pub seq: u64,
}

impl std::fmt::Display for Saved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self
            .bricks_in_file
            .map_or_else(|| "?".to_string(), |n| n.to_string());
        write!(
            f,
            "saved at op {}: {total} bricks baked ({} written now) and {} blocks",
            self.seq, self.bricks, self.blocks
        )
    }
}

/// A world read from its file, ready for an app: [`OpenedWorld::insert_into`] inserts its
/// parts as resources.
pub struct OpenedWorld {
    /// The world, its field as the file's bricks and ops left it.
    pub world: LoamWorld,
    /// The file, for the ops to come.
    pub file: WorldFile,
    /// The blocks the file holds (none in a new file), journaling into it.
    pub blocks: LoamBlocks,
    /// The physics world of the blocks.
    pub physics: Physics,
    /// Ops whose block side no longer applied and were skipped (sequence number, reason).
    pub skipped: Vec<(u64, String)>,
    /// Whether the file was created, not opened.
    pub created: bool,
}

impl OpenedWorld {
    /// Inserts the world, the file, the blocks and their physics into `app`.
    pub fn insert_into(self, app: &mut App) -> &mut App {
        app.insert_resource(self.world)
            .insert_resource(self.file)
            .insert_resource(self.blocks)
            .insert_resource(self.physics)
    }
}

impl WorldFile {
    /// Wraps an open store.
    pub fn new(store: Store) -> Self {
        Self {
            store: Mutex::new(store),
            error: None,
        }
    }

    /// Opens the world file at `path`, or creates it if there is none, for the terrain of
    /// `base` (a field of the generator, with no edits): its bricks and ops are applied over
    /// `base`, its blocks restored, and the world made with `settings`.
    ///
    /// `generator_json` describes the generator for tools that rebuild it: the file keeps it
    /// as given. `loam edit FILE` reads the JSON of a session's `generator`
    /// ([`loam_session::GeneratorSpec`]), e.g. `{"kind": "noise"}` for `Generator::noise`
    /// with default terrain and cave settings; for a DEM the file also records the DEM's
    /// BLAKE3, which `loam edit` checks. An existing file must hold the same text and the
    /// same field settings as `base`.
    ///
    /// # Errors
    /// [`WorldFileError::Store`]: the file cannot be created, opened (another process, or
    /// another open `WorldFile` or `Store` of it in this process, holds it) or read; [`WorldFileError::OtherGenerator`] and
    /// [`WorldFileError::OtherFieldSettings`]: the file is another world's;
    /// [`WorldFileError::World`]: `settings` are out of range; [`WorldFileError::Dem`]: the
    /// generator JSON names a DEM file that cannot be read.
    pub fn open_or_create(
        path: impl AsRef<Path>,
        base: Field,
        generator_json: &str,
        settings: WorldSettings,
    ) -> Result<OpenedWorld, WorldFileError> {
        let path = path.as_ref();
        let created = !path.exists();
        let mut store = if created {
            // A generator in the session format that names a DEM: the file records the DEM's
            // BLAKE3 beside it, as `loam world new` does.
            let dem = match loam_session::GeneratorSpec::from_json(generator_json) {
                Ok(spec) => spec.dem_blake3(Path::new(""))?,
                Err(_) => None,
            };
            Store::create(path, generator_json, base.settings(), dem.as_deref())?
        } else {
            Store::open(path)?
        };
        let held = store.generator_json()?;
        if held != generator_json {
            return Err(WorldFileError::OtherGenerator {
                held,
                given: generator_json.into(),
            });
        }
        let held = store.field_settings()?;
        if held != *base.settings() {
            return Err(WorldFileError::OtherFieldSettings {
                held: Box::new(held),
                given: Box::new(*base.settings()),
            });
        }
        let (loaded, restored) = persist::load(&mut store, base)?;
        let world = World::resume(loaded.field, loaded.history, loaded.last_seq, settings)?;
        Ok(OpenedWorld {
            world: LoamWorld::new(world),
            file: WorldFile::new(store),
            blocks: restored.blocks,
            physics: restored.physics,
            skipped: restored.skipped,
            created,
        })
    }

    /// The last op's sequence number in the file.
    ///
    /// # Errors
    /// [`WorldFileError::Poisoned`].
    pub fn last_seq(&self) -> Result<u64, WorldFileError> {
        Ok(self.lock()?.last_seq())
    }

    /// The world file's bytes as they are now ([`Store::image`]): every op appended so far.
    /// A world held in memory (a browser's) is kept by keeping these.
    ///
    /// # Errors
    /// [`WorldFileError::Store`]: SQLite failures.
    pub fn image(&self) -> Result<Vec<u8>, WorldFileError> {
        Ok(self.lock()?.image()?)
    }

    /// Appends every op applied since the last append (terrain and block, in sequence order)
    /// to the file's log; returns how many. The plugin does this at the end of every frame.
    ///
    /// # Errors
    /// As [`persist::flush`]: the ops not written are kept for the next append.
    pub fn append(
        &self,
        world: &World,
        blocks: Option<&mut LoamBlocks>,
    ) -> Result<usize, WorldFileError> {
        let mut store = self.lock()?;
        let mut none = Vec::new();
        let journal = blocks.map_or(&mut none, |b| &mut b.journal);
        Ok(persist::flush(&mut store, world, journal)?)
    }

    /// Appends (see [`WorldFile::append`]) and bakes the world as it is now: bricks, history
    /// and the blocks' snapshot. `blocks` and `physics` are the app's block world and its
    /// physics (the resources [`OpenedWorld::insert_into`] inserts); `None` for an app
    /// without blocks, which bakes an empty block world.
    ///
    /// # Errors
    /// As [`persist::bake`]; nothing is baked when the append fails.
    /// [`WorldFileError::BlocksNotGiven`] when `blocks` is `None` but the file holds blocks
    /// or block ops (the bake would drop them); nothing is written then.
    pub fn save(
        &self,
        world: &World,
        blocks: Option<&mut LoamBlocks>,
        physics: Option<&Physics>,
    ) -> Result<Saved, WorldFileError> {
        let mut store = self.lock()?;
        let (mut no_blocks, mut no_physics) = (None, None);
        let blocks = match blocks {
            Some(b) => b,
            None => {
                let block_ops = store.info()?.block_ops;
                let held = match store.blocks()? {
                    Some(saved) => {
                        let file = loam_blocks::BlocksFile::decode(&saved.data)
                            .map_err(WorldFileError::BlocksSnapshot)?;
                        (file.blocks.len() + file.pieces.len()) as u64
                    }
                    None => 0,
                };
                if block_ops > 0 || held > 0 {
                    return Err(WorldFileError::BlocksNotGiven { block_ops, held });
                }
                no_blocks.insert(LoamBlocks::new())
            }
        };
        let physics = match physics {
            Some(p) => p,
            None => no_physics.insert(Physics::new()),
        };
        let bricks = persist::bake(&mut store, world, blocks, physics)?;
        Ok(Saved {
            bricks,
            bricks_in_file: store.info().ok().map(|i| i.bricks),
            blocks: blocks.world.store().len(),
            seq: store.last_seq(),
        })
    }

    /// Why the last append at the end of a frame failed, once (the plugin logs it too).
    pub fn take_error(&mut self) -> Option<WorldFileError> {
        self.error.take()
    }

    fn lock(&self) -> Result<MutexGuard<'_, Store>, WorldFileError> {
        self.store.lock().map_err(|_| WorldFileError::Poisoned)
    }
}

/// Appends this frame's ops to the world file.
pub(crate) fn write_ops(
    mut file: ResMut<WorldFile>,
    world: Res<LoamWorld>,
    blocks: Option<ResMut<LoamBlocks>>,
) {
    if let Err(e) = file.append(&world.world, blocks.map(ResMut::into_inner)) {
        error!("could not append to the world file: {e}");
        file.error = Some(e);
    }
}

/// Bakes the world into its file when the app is about to exit (the window closed, or an
/// exit was asked for).
pub(crate) fn save_on_exit(
    mut exits: MessageReader<AppExit>,
    file: Res<WorldFile>,
    world: Res<LoamWorld>,
    blocks: Option<ResMut<LoamBlocks>>,
    physics: Option<Res<Physics>>,
) {
    if exits.read().count() == 0 {
        return;
    }
    match file.save(
        &world.world,
        blocks.map(ResMut::into_inner),
        physics.as_deref(),
    ) {
        Ok(saved) => info!("{saved}"),
        Err(e) => error!("save failed: {e}"),
    }
}
