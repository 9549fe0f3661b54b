//! The world's snapshot on JetStream: now and then a node copies its world file (baked
//! bricks, the blocks, and the stream position they stand at, all in one SQLite file) and
//! puts the copy into the world's object store, `LOAM_<world>_SNAP`, as the object
//! [`SNAPSHOT_OBJECT`]. A node that starts without a world file takes that copy and
//! replays only the stream after its position, instead of the whole stream.
//!
//! ```text
//!  node's writer ── online copy (backups.rs) ──▶ <world>.snapshots/…loam ──▶ uploader
//!                                                                              │ put, if newer
//!  new node ◀── get, check (world tag, generator, position) ◀── object store LOAM_<w>_SNAP
//!     └── replays the stream from the copy's position
//! ```
//!
//! A snapshot is never needed for correctness: any copy of any node at any position is the
//! world every node holds at that position (the copy is taken between two groups of the
//! writer, with its position in the same file), so a copy that loses a race to an older one,
//! or that fails to upload, only makes the next start replay more.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, object_store};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc::UnboundedReceiver;

use super::log::{Names, Position};
use super::stream::js_err;
use super::{ClusterError, Genesis};

/// The object that holds the world's latest snapshot.
pub const SNAPSHOT_OBJECT: &str = "world";

/// How often a node copies its world file for the snapshot, by default (`--snapshot-every`).
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(600);

/// The object's metadata key of the stream sequence the copy stands at.
const SEQ_KEY: &str = "seq";

/// The object's metadata key of the node that made it.
const NODE_KEY: &str = "node";

/// The object's metadata key of the world's tag ([`Genesis::tag`]): a bucket left by an
/// earlier world of the same id holds another world's copy.
const WORLD_KEY: &str = "world";

/// The world's snapshot, as the object store describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The stream sequence the copy stands at (every message up to it is in it).
    pub seq: u64,
    /// Its size in bytes.
    pub bytes: usize,
    /// The node that made it.
    pub node: u16,
    /// The tag of the world it is of ([`Genesis::tag`]).
    pub world: String,
}

/// The world's object store, made if missing with `replicas` copies (by hand: the
/// client's own maker sets options NATS 2.9 does not know).
///
/// # Errors
/// [`ClusterError::JetStream`].
pub(crate) async fn bucket(
    js: &jetstream::Context,
    names: &Names,
    replicas: usize,
) -> Result<object_store::ObjectStore, ClusterError> {
    let bucket = names.snapshot_bucket();
    if let Ok(store) = js.get_object_store(&bucket).await {
        return Ok(store);
    }
    js.get_or_create_stream(jetstream::stream::Config {
        name: format!("OBJ_{bucket}"),
        description: Some(format!("Loam world {}: snapshots", names.world)),
        subjects: vec![format!("$O.{bucket}.C.>"), format!("$O.{bucket}.M.>")],
        allow_rollup: true,
        allow_direct: true,
        discard: jetstream::stream::DiscardPolicy::New,
        num_replicas: replicas.max(1),
        storage: jetstream::stream::StorageType::File,
        ..Default::default()
    })
    .await
    .map_err(|e| js_err("making the snapshot store")(&e))?;
    js.get_object_store(&bucket)
        .await
        .map_err(|e| js_err("opening the snapshot store")(&e))
}

/// What the store says of the snapshot: `Ok(None)` if there is none, or its description
/// does not read (a copy no Loam node put).
///
/// # Errors
/// The store did not answer, as text.
pub(crate) async fn info(
    store: &object_store::ObjectStore,
) -> Result<Option<SnapshotInfo>, String> {
    let i = match store.info(SNAPSHOT_OBJECT).await {
        Ok(i) => i,
        Err(e) if e.kind() == object_store::InfoErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let read = || {
        Some(SnapshotInfo {
            seq: i.metadata.get(SEQ_KEY)?.parse().ok()?,
            bytes: i.size,
            node: i.metadata.get(NODE_KEY)?.parse().ok()?,
            world: i.metadata.get(WORLD_KEY)?.clone(),
        })
    };
    Ok(read())
}

/// The snapshot of world `cfg.world_id`, `None` if no node made one yet (or the one there
/// is of an earlier world of that id).
///
/// # Errors
/// As [`super::WorldStream::open`].
pub async fn snapshot_info(cfg: &super::NodeConfig) -> Result<Option<SnapshotInfo>, ClusterError> {
    let world = super::WorldStream::open(cfg).await?;
    let store = bucket(&world.js, &world.names, world.replicas()).await?;
    info(&store)
        .await
        .map_err(|why| ClusterError::JetStream {
            what: "reading the snapshot's description",
            why,
        })
        .map(|i| i.filter(|i| i.world == world.genesis.tag()))
}

/// Puts the world file copy at `copy` (made by node `node` of the world tagged `world`) as
/// the snapshot, unless the one there is of this world and stands at the same or a later
/// position; then drops the data of any other object (a put that failed half-way, or lost a
/// race to another node's). Returns the copy's position if it was put.
///
/// # Errors
/// [`ClusterError::Store`] when the copy does not read as a node's file,
/// [`ClusterError::JetStream`] when the store refuses it.
pub(crate) async fn upload(
    store: &object_store::ObjectStore,
    js: &jetstream::Context,
    names: &Names,
    world: &str,
    copy: &Path,
    node: u16,
) -> Result<Option<u64>, ClusterError> {
    let path = copy.to_path_buf();
    let (seq, bytes) = tokio::task::spawn_blocking(move || {
        let seq = loam_store::Store::open_read_only(&path)?
            .followed()?
            .as_deref()
            .and_then(Position::decode)
            .map(|p| p.seq);
        let bytes = std::fs::read(&path).map_err(|e| loam_store::StoreError::Io {
            path: path.clone(),
            source: e,
        })?;
        Ok::<_, loam_store::StoreError>((seq, bytes))
    })
    .await
    .map_err(|e| js_err("reading a snapshot copy")(&e))??;
    let Some(seq) = seq else {
        return Err(ClusterError::JetStream {
            what: "reading a snapshot copy",
            why: format!("{} holds no stream position", copy.display()),
        });
    };
    let there = info(store).await.map_err(|why| ClusterError::JetStream {
        what: "reading the snapshot's description",
        why,
    })?;
    if there.is_some_and(|i| i.world == world && i.seq >= seq) {
        return Ok(None);
    }
    let meta = object_store::ObjectMetadata {
        name: SNAPSHOT_OBJECT.into(),
        description: Some(format!(
            "the world file of node {node} at stream sequence {seq}"
        )),
        metadata: HashMap::from([
            (SEQ_KEY.to_string(), seq.to_string()),
            (NODE_KEY.to_string(), node.to_string()),
            (WORLD_KEY.to_string(), world.to_string()),
        ]),
        ..Default::default()
    };
    let put = store
        .put(meta, &mut bytes.as_slice())
        .await
        .map_err(|e| js_err("putting the snapshot")(&e))?;
    if let Err(e) = tidy(js, names, &put.nuid).await {
        tracing::warn!("the snapshot store keeps data of older puts: {e}");
    }
    Ok(Some(seq))
}

/// Purges the data of every object but the one whose data is under `keep` (the store's
/// own put purges only the object it replaced: a put that failed half-way, or one that two
/// nodes made at once, would leave its data for ever).
async fn tidy(js: &jetstream::Context, names: &Names, keep: &str) -> Result<(), String> {
    use futures_util::TryStreamExt;
    let bucket = names.snapshot_bucket();
    let stream = js
        .get_stream(format!("OBJ_{bucket}"))
        .await
        .map_err(|e| e.to_string())?;
    let chunks = format!("$O.{bucket}.C.");
    let subjects: Vec<String> = stream
        .info_with_subjects(format!("{chunks}>"))
        .await
        .map_err(|e| e.to_string())?
        .map_ok(|(subject, _)| subject)
        .try_collect()
        .await
        .map_err(|e| e.to_string())?;
    for subject in subjects {
        if subject.strip_prefix(&chunks) != Some(keep) {
            stream
                .purge()
                .filter(subject)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// How long taking the snapshot may take: 30 s, and a second more per MiB.
fn download_patience(bytes: usize) -> Duration {
    Duration::from_secs(30 + (bytes >> 20) as u64)
}

/// Takes the world's snapshot into `path` (which must not exist) if there is one of this
/// world (checked as a node checks its own file: generator, field settings, world tag)
/// and returns its position; `None` (and no file) if there is none, it is another world's,
/// it does not read or check, or it takes too long ([`download_patience`]); the reason is
/// said in the log, and the node then starts from the genesis.
pub(crate) async fn download(
    store: &object_store::ObjectStore,
    genesis: &Genesis,
    path: &Path,
) -> Option<Position> {
    let start = Instant::now();
    let snapshot = match info(store).await {
        Ok(Some(s)) if s.world == genesis.tag() => s,
        Ok(Some(s)) => {
            tracing::warn!(
                "the world's snapshot is of another world (tagged {}: an earlier world of this \
                 id); replaying the whole stream",
                s.world
            );
            return None;
        }
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(
                "the world's snapshot store did not answer: {e}; replaying the whole stream"
            );
            return None;
        }
    };
    let mut bytes = Vec::with_capacity(snapshot.bytes);
    let read = async {
        let mut object = store
            .get(SNAPSHOT_OBJECT)
            .await
            .map_err(|e| e.to_string())?;
        object
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| e.to_string())
    };
    // A put of a newer snapshot purges the data of the one being read: the read would wait
    // for ever.
    let patience = download_patience(snapshot.bytes);
    let read = tokio::time::timeout(patience, read)
        .await
        .unwrap_or_else(|_| Err(format!("not read in {} s", patience.as_secs())));
    if let Err(e) = read {
        tracing::warn!("the world's snapshot could not be read: {e}; replaying the whole stream");
        return None;
    }
    let part = part_path(path);
    let write = || -> Result<Position, String> {
        let mut f = std::fs::File::create(&part).map_err(|e| e.to_string())?;
        std::io::Write::write_all(&mut f, &bytes).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
        drop(f);
        let at = super::check_snapshot(&part, genesis)
            .map_err(|e| crate::error_chain(&e))?
            .ok_or("it is empty")?;
        loam_store::remove_world_files(path);
        std::fs::rename(&part, path).map_err(|e| e.to_string())?;
        // SQLite's companions of the part, if the check left any.
        loam_store::remove_world_files(&part);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| e.to_string())?;
        }
        Ok(at)
    };
    match write() {
        Ok(at) => {
            tracing::info!(
                "started from the world's snapshot of node {} at stream sequence {} ({} bytes, \
                 taken in {:.3} s)",
                snapshot.node,
                at.seq,
                bytes.len(),
                start.elapsed().as_secs_f64()
            );
            Some(at)
        }
        Err(why) => {
            loam_store::remove_world_files(&part);
            tracing::warn!("the world's snapshot was not taken: {why}; replaying the whole stream");
            None
        }
    }
}

/// Where a snapshot is written before it is checked and renamed to `path`.
fn part_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".snapshot-part");
    PathBuf::from(p)
}

/// The folder of a node's snapshot copies of its world file `world`: `<world>.snapshots`.
pub(crate) fn copies_dir(world: &Path) -> PathBuf {
    let mut p = world.as_os_str().to_owned();
    p.push(".snapshots");
    PathBuf::from(p)
}

/// Who puts a node's copies, and into which world.
pub(crate) struct Uploading {
    pub js: jetstream::Context,
    pub names: Names,
    /// The world's tag ([`Genesis::tag`]).
    pub world: String,
    pub node: u16,
    /// Whether the node holds the world's block lease now (`lease.rs`): only that node
    /// puts, so two nodes seldom put at once (a put tidies the data of any other, which
    /// would spoil a put under way: the next node to take it would find its digest wrong
    /// and replay the whole stream).
    pub holds_blocks: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Puts each finished copy of the node's world file as the snapshot, in turn, while the
/// node holds the block lease (the newest copy made before it took the lease is put once it
/// has), until the writer is gone. A copy that fails is said and skipped (the next one is
/// tried).
pub(crate) async fn uploader(
    store: object_store::ObjectStore,
    up: Uploading,
    mut copies: UnboundedReceiver<PathBuf>,
) {
    // The newest copy not put yet: kept while the node does not hold the block lease (it
    // may take it later; the copy stays on disk until the next one is finished).
    let mut pending: Option<PathBuf> = None;
    loop {
        tokio::select! {
            copy = copies.recv() => match copy {
                Some(copy) => pending = Some(copy),
                None => return,
            },
            () = tokio::time::sleep(Duration::from_secs(1)), if pending.is_some() => {}
        }
        if !up.holds_blocks.load(std::sync::atomic::Ordering::SeqCst) {
            continue;
        }
        let Some(copy) = pending.take() else { continue };
        let start = Instant::now();
        match upload(&store, &up.js, &up.names, &up.world, &copy, up.node).await {
            Ok(Some(seq)) => tracing::info!(
                "put the world's snapshot at stream sequence {seq} in {:.3} s",
                start.elapsed().as_secs_f64()
            ),
            Ok(None) => {}
            Err(e) => tracing::warn!(
                "the world's snapshot was not put: {}",
                crate::error_chain(&e)
            ),
        }
    }
}
