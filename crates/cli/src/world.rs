//! `loam world new|info|compact|export`: world files (loam-store) from the command line.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use loam_bevy::persist::Restored;
use loam_field::Field;
use loam_store::Store;

use crate::session::{self, GeneratorSpec, Session};
use crate::timeline::TimedOp;

/// Arguments of `loam world`.
#[derive(Debug, clap::Args)]
pub struct WorldArgs {
    #[command(subcommand)]
    command: WorldCommand,
}

#[derive(Debug, clap::Subcommand)]
enum WorldCommand {
    /// Create an empty world file with a session's terrain and field settings (its ops are
    /// not applied: `loam replay SESSION --world NEW_FILE` writes a new world with them).
    New {
        /// The world file to create (must not exist).
        #[arg(required_unless_present = "nats", conflicts_with = "nats")]
        file: Option<PathBuf>,
        /// The session whose `field` and `generator` the world uses; without it, the
        /// generated terrain a new world of `loam edit` gets (`examples/generated.json`).
        #[arg(long, default_value = crate::edit::DEFAULT_SESSION)]
        session: PathBuf,
        /// Create the world on NATS JetStream instead (`nats://HOST:PORT`, or several servers
        /// of a cluster separated by commas): a stream
        /// `LOAM_<WORLD_ID>` holding the world's genesis, then every op; nodes serve it
        /// (`loam serve --nats URL --world-id NAME`).
        #[arg(long, requires = "world_id")]
        nats: Option<String>,
        /// The world's id on NATS: 1 to 64 ASCII letters, digits, `-` or `_`.
        #[arg(long, requires = "nats")]
        world_id: Option<String>,
        /// Copies of the stream the NATS cluster keeps: 1 on one server, 3 on a 3-server
        /// cluster (a killed server then loses nothing acknowledged).
        #[arg(long, default_value_t = 1, requires = "nats", value_parser = clap::value_parser!(u16).range(1..=5))]
        replicas: u16,
    },
    /// Print what a world file holds: ops, bricks, bytes on disk, the generator, and the
    /// field hash of the loaded world.
    Info {
        /// The world file.
        file: PathBuf,
    },
    /// Bake the world as it is and drop the ops the bake covers.
    Compact {
        /// The world file.
        file: PathBuf,
        /// If the saved undo history is corrupt, go on without it: the terrain and blocks
        /// are kept whole and saved with an empty history (undo of earlier strokes is lost).
        #[arg(long)]
        discard_history: bool,
    },
    /// Write the world as a session (its terrain and every op), if no op was compacted away.
    Export {
        /// The world file.
        #[arg(required_unless_present = "nats", conflicts_with = "nats")]
        file: Option<PathBuf>,
        /// The session file to write; with `--nats`, the world file to write (it must not
        /// exist): the stream's world as every node holds it, which `loam world info` reads.
        #[arg(long)]
        out: PathBuf,
        /// Export a world on NATS JetStream (`nats://HOST:PORT`, or several servers of a
        /// cluster separated by commas) instead of a file.
        #[arg(long, requires = "world_id")]
        nats: Option<String>,
        /// The world's id on NATS (with `--nats`).
        #[arg(long, requires = "nats")]
        world_id: Option<String>,
        /// Leave the blocks out: write the terrain ops only. A world with blocks (placed in
        /// the editor, or terrain a server's digs cut loose) is otherwise refused, since a
        /// session holds terrain ops and one block scene, not a log of both. Block ops never
        /// change the terrain, so the session's terrain is the world's, bit for bit.
        #[arg(long)]
        terrain_only: bool,
    },
}

/// Creates a world file for `session`'s terrain and settings. A heightmap (its path already
/// relative to where the command runs) is stored in the world itself ([`EmbeddedDem`]), so
/// the world can be moved, and served to clients that lack the file; its absolute path is
/// kept only to say where it came from, and its BLAKE3 beside it.
///
/// # Errors
/// A file already there, an unusable heightmap path, SQLite failures.
///
/// [`EmbeddedDem`]: loam_session::generator::EmbeddedDem
pub fn create(
    path: &Path,
    session: &Session,
    heightmap_blake3: Option<&str>,
) -> anyhow::Result<Store> {
    let json = world_generator_json(session)?;
    Store::create(path, &json, &session.field, heightmap_blake3)
        .with_context(|| format!("creating world {path:?}"))
}

/// The generator JSON a world keeps for `session`: a heightmap (its path relative to where
/// the command runs) embedded, so the world can be moved and served to clients that lack
/// the file.
fn world_generator_json(session: &Session) -> anyhow::Result<String> {
    let generator = match &session.generator {
        GeneratorSpec::Heightmap {
            path: p,
            embedded: None,
            ..
        } => {
            let abs = std::fs::canonicalize(p).with_context(|| format!("heightmap {p:?}"))?;
            session.generator.clone().with_path(abs).embedded()?
        }
        g => g.clone(),
    };
    Ok(serde_json::to_string(&generator)?)
}

/// Creates world `id` on the NATS server at `url` with `loaded`'s terrain and settings (a
/// heightmap embedded, as in a world file): the stream and its genesis
/// ([`loam_server::cluster::create_world`]).
///
/// # Errors
/// NATS unreachable, a world of that id already there, an unusable heightmap path.
fn create_on_nats(
    url: &str,
    id: &str,
    replicas: u16,
    loaded: &session::Loaded,
) -> anyhow::Result<loam_server::cluster::Genesis> {
    let json = world_generator_json(&loaded.session)?;
    crate::serve::runtime()?
        .block_on(loam_server::cluster::create_world(
            url,
            id,
            usize::from(replicas),
            &json,
            loaded.session.field,
            loaded.heightmap_blake3.clone(),
            &crate::serve::factory(),
        ))
        .with_context(|| format!("creating world {id} on {url}"))
}

/// Loads an opened world with the one loader ([`loam_session::load`]): the generator
/// rebuilt from its JSON (a heightmap must still exist and have the same BLAKE3), then the
/// bricks, history and newer ops, with the world's blocks: the snapshot of the last bake,
/// then the block ops after it replayed among the terrain ops at their physics steps. Ops
/// whose block side no longer applies are reported on stderr and skipped.
pub(crate) fn load_session(
    store: &mut Store,
    path: &Path,
) -> anyhow::Result<loam_session::LoadedSession> {
    let field = base_field(store, path)?;
    let loaded =
        loam_session::load(store, field).with_context(|| format!("loading world {path:?}"))?;
    for s in &loaded.blocks.skipped {
        eprintln!("loam: {path:?}: op {} skipped on load: {}", s.seq, s.error);
    }
    Ok(loaded)
}

/// [`load_session`], its blocks wrapped in the app's resources (for `loam edit` and
/// `loam render`).
pub(crate) fn load_with_blocks(
    store: &mut Store,
    path: &Path,
) -> anyhow::Result<(loam_store::LoadedWorld, Restored)> {
    let loaded = load_session(store, path)?;
    Ok((loaded.world, Restored::from(loaded.blocks)))
}

/// A fresh field of the world's generator and settings.
fn base_field(store: &Store, path: &Path) -> anyhow::Result<Field> {
    loam_session::base_field(store, Path::new(""))
        .with_context(|| format!("the terrain of {path:?}"))
}

fn open_read_only(path: &Path) -> anyhow::Result<Store> {
    Store::open_read_only(path).with_context(|| format!("opening world {path:?}"))
}

/// Runs `loam world …`.
///
/// # Errors
/// Bad or missing files, a world in use, SQLite failures.
/// When the world file or its write-ahead log (`FILE-wal`, where appended ops wait for a
/// checkpoint) was last written, unix seconds: a server or editor appends ops without
/// touching the baked `modified` time. `None` if neither file's time can be read.
fn written_unix(file: &std::path::Path) -> Option<u64> {
    let mut wal = file.as_os_str().to_owned();
    wal.push("-wal");
    [file.as_os_str().to_owned(), wal]
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .filter_map(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .max()
}

pub fn run(args: &WorldArgs) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    match &args.command {
        WorldCommand::New {
            file,
            session,
            nats,
            world_id,
            replicas,
        } => {
            // The default session is found from any folder, as `loam edit` finds it.
            let loaded = session::load(&crate::edit::resolve_example(session))?;
            match (file, nats, world_id) {
                (Some(file), _, _) => {
                    create(file, &loaded.session, loaded.heightmap_blake3.as_deref())?;
                    writeln!(o, "created {}", file.display())?;
                }
                (None, Some(url), Some(id)) => {
                    let g = create_on_nats(url, id, *replicas, &loaded)?;
                    writeln!(
                        o,
                        "created world {id} on {url} (stream LOAM_{id}, {replicas} replica(s), generator fingerprint {})",
                        g.fingerprint
                    )?;
                }
                _ => bail!("give a world FILE, or --nats URL --world-id NAME"),
            }
        }
        WorldCommand::Info { file } => {
            // The metadata is printed before loading, so a world that fails to load still says
            // what it is.
            let mut store = open_read_only(file)?;
            let i = store.info()?;
            writeln!(
                o,
                "world       {} (format {})",
                file.display(),
                i.format_version
            )?;
            let shown = serde_json::from_str::<GeneratorSpec>(&i.generator_json)
                .map_or_else(|_| i.generator_json.clone(), |g| g.summary_json());
            writeln!(o, "generator   {shown}")?;
            if let Some(h) = &i.heightmap_blake3 {
                writeln!(o, "heightmap   blake3 {h}")?;
            }
            writeln!(
                o,
                "voxel       {} m, band {} m",
                i.field.voxel_size,
                i.field.band()
            )?;
            writeln!(
                o,
                "ops         {} terrain and {} block ops in the log, last seq {}, bake covers {}",
                i.ops,
                store.block_ops_after(0)?.len(),
                i.last_seq,
                i.bake_seq
            )?;
            writeln!(o, "bricks      {} baked", i.bricks)?;
            writeln!(o, "disk        {} bytes", i.file_bytes)?;
            writeln!(
                o,
                "created     {} (unix s), baked {}, written {}",
                i.created_unix,
                i.modified_unix,
                written_unix(file).map_or_else(|| "?".to_string(), |t| t.to_string())
            )?;
            // A corrupt undo history does not hide the rest: shown without it.
            store.set_discard_corrupt_history(true);
            let loam_session::LoadedSession {
                world: loaded,
                blocks,
            } = load_session(&mut store, file)?;
            if let Some(why) = &loaded.history_discarded {
                writeln!(
                    o,
                    "history     CORRUPT ({why}): shown without it; `loam world compact \
                     --discard-history` saves the world without it"
                )?;
            }
            let b = &blocks.world;
            writeln!(
                o,
                "blocks      {} held, {} pieces ({} ops after the bake)",
                b.store().len(),
                b.pieces().count(),
                loaded.block_ops.len()
            )?;
            if !loaded.block_ops.is_empty() && b.pieces().next().is_some() {
                writeln!(
                    o,
                    "            (pieces of ops after the bake are where the replay of the \
                     log left them)"
                )?;
            }
            for p in b.pieces() {
                let (lo, hi) = p.world_bounds();
                let c = [0, 1, 2].map(|i| (lo[i] + hi[i]) / 2.0);
                writeln!(
                    o,
                    "  piece {}  {} blocks, {}, centre ({:.3}, {:.3}, {:.3}) m, speed {:.3} m/s",
                    p.id.0,
                    p.blocks.len(),
                    match p.state {
                        loam_blocks::PieceState::Falling => "falling",
                        loam_blocks::PieceState::Rubble { .. } => "rubble",
                    },
                    c[0],
                    c[1],
                    c[2],
                    p.velocity.iter().map(|v| v * v).sum::<f32>().sqrt()
                )?;
            }
            writeln!(o, "field-hash: {}", loaded.field.hash())?;
            // Held blocks and resting rubble (`loam_protocol::block_hash`, what clients and
            // servers compare).
            let bh = loam_protocol::blocks::block_hash(b, None, loaded.field.settings().voxel_size);
            let hex: String = bh.iter().map(|x| format!("{x:02x}")).collect();
            writeln!(o, "block-hash: {hex}")?;
        }
        WorldCommand::Compact {
            file,
            discard_history,
        } => {
            let mut store = Store::open(file).with_context(|| format!("opening world {file:?}"))?;
            store.set_discard_corrupt_history(*discard_history);
            let loam_session::LoadedSession {
                world: loaded,
                blocks,
            } = load_session(&mut store, file)?;
            if let Some(why) = &loaded.history_discarded {
                eprintln!(
                    "loam: warning: {file:?}: the saved undo history is corrupt ({why}); \
                     compacted without it"
                );
            }
            // The block world as the load left it: the snapshot with the newer block ops
            // replayed at their steps (`loam_session::load`).
            let written = if loaded.blocks.is_none() && loaded.block_ops.is_empty() {
                store.bake(&loaded.field, &loaded.history, loaded.last_seq)?
            } else {
                store.bake_with_blocks(
                    &loaded.field,
                    &loaded.history,
                    loaded.last_seq,
                    blocks.step(),
                    &blocks.world.save().encode(),
                )?
            };
            let dropped = store
                .compact()
                .with_context(|| format!("compacting world {file:?} (nothing was dropped)"))?;
            let before = store.info()?.file_bytes;
            // The ops are dropped now (the bake covers them): a vacuum that fails (a full
            // disk) only leaves their space in the file.
            let after = match store.vacuum() {
                Ok(()) => store.info()?.file_bytes,
                Err(e) => {
                    eprintln!(
                        "loam: warning: {file:?} is compacted ({dropped} ops dropped, covered by \
                         the bake), but giving their space back to the disk failed: {e}"
                    );
                    before
                }
            };
            writeln!(
                o,
                "baked {written} bricks at seq {}, dropped {dropped} ops; {before} → {after} bytes on disk",
                loaded.last_seq
            )?;
        }
        WorldCommand::Export {
            file: None,
            out,
            nats: Some(url),
            world_id: Some(id),
            ..
        } => {
            let cfg = loam_server::cluster::NodeConfig::new(url.clone(), id.clone());
            let s = crate::serve::runtime()?
                .block_on(loam_server::cluster::export_world(
                    &cfg,
                    out,
                    &crate::serve::factory(),
                ))
                .with_context(|| format!("exporting world {id} from {url} to {out:?}"))?;
            writeln!(
                o,
                "exported world {id} up to stream sequence {} to {}: {} ops, {} refused, {} skipped, \
                 {} late block outcomes (of an authority after its lease passed on) skipped",
                s.stream_seq,
                out.display(),
                s.ops,
                s.refused,
                s.skipped,
                s.late
            )?;
            writeln!(o, "field-hash: {}", s.field_hash)?;
            writeln!(o, "blocks: {} held, {} pieces", s.blocks, s.pieces)?;
        }
        WorldCommand::Export { file: None, .. } => {
            bail!("give a world FILE, or --nats URL --world-id NAME")
        }
        WorldCommand::Export {
            file: Some(file),
            out,
            terrain_only,
            ..
        } => {
            // Only the metadata and the ops are read: damaged bricks do not stop an export.
            let store = open_read_only(file)?;
            let spec: GeneratorSpec = serde_json::from_str(&store.generator_json()?)
                .context("the world's generator settings")?;
            let info = store.info()?;
            let snapshot_has_blocks = store.blocks()?.is_some_and(|b| {
                loam_blocks::BlocksFile::decode(&b.data)
                    .map_or(true, |f| !f.blocks.is_empty() || !f.pieces.is_empty())
            });
            let block_ops = info.block_ops;
            let has_blocks = snapshot_has_blocks || block_ops > 0;
            if has_blocks && !terrain_only {
                bail!(
                    "{file:?} has blocks: a session holds terrain ops and a block scene, not a log of both, so it cannot be exported whole (`--terrain-only` writes its terrain without the blocks)"
                );
            }
            if info.ops + info.block_ops != info.last_seq {
                bail!(
                    "{file:?} was compacted ({} of {} ops left): its ops no longer describe the world",
                    info.ops + info.block_ops,
                    info.last_seq
                );
            }
            let ops = store
                .ops_after(0)?
                .into_iter()
                .map(|e| {
                    let reverts = matches!(
                        e.op,
                        loam_field::EditOp::Undo { .. } | loam_field::EditOp::Redo { .. }
                    );
                    TimedOp {
                        t: None,
                        stroke: (!reverts).then_some(e.stroke),
                        op: e.op,
                    }
                })
                .collect();
            let session = Session {
                format: session::FORMAT.into(),
                version: session::VERSION,
                field: info.field,
                generator: spec,
                world: Default::default(),
                viewers: Vec::new(),
                ops,
                camera: None,
                blocks: None,
            };
            // Whole or not at all, and never over a world file (the one exported included).
            crate::output::write_whole(
                out,
                (serde_json::to_string_pretty(&session)? + "\n").as_bytes(),
            )?;
            write!(o, "exported {} ops to {}", info.ops, out.display())?;
            if has_blocks {
                write!(o, " (blocks left out: {block_ops} block ops")?;
                if snapshot_has_blocks {
                    write!(o, " and the blocks of the last bake")?;
                }
                write!(o, ")")?;
            }
            writeln!(o)?;
        }
    }
    Ok(())
}
