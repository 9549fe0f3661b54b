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

/// The world's snapshot, as the object store describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The stream sequence the copy stands at (every message up to it is in it).
    pub seq: u64,
    /// Its size in bytes.
    pub bytes: usize,
    /// The node that made it.
    pub node: u16,
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
    let bucket = format!("LOAM_{}_SNAP", names.world);
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

/// What the store says of the snapshot, `None` if there is none (or it does not read).
pub(crate) async fn info(store: &object_store::ObjectStore) -> Option<SnapshotInfo> {
    let i = store.info(SNAPSHOT_OBJECT).await.ok()?;
    Some(SnapshotInfo {
        seq: i.metadata.get(SEQ_KEY)?.parse().ok()?,
        bytes: i.size,
        node: i.metadata.get(NODE_KEY)?.parse().ok()?,
    })
}

/// The snapshot of world `cfg.world_id`, `None` if no node made one yet.
///
/// # Errors
/// As [`super::WorldStream::open`].
pub async fn snapshot_info(cfg: &super::NodeConfig) -> Result<Option<SnapshotInfo>, ClusterError> {
    let world = super::WorldStream::open(cfg).await?;
    let store = bucket(&world.js, &world.names, world.replicas()).await?;
    Ok(info(&store).await)
}

/// Puts the world file copy at `copy` (made by node `node`) as the snapshot, unless the one
/// there stands at the same or a later position. Returns the copy's position if it was put.
///
/// # Errors
/// [`ClusterError::Store`] when the copy does not read as a node's file,
/// [`ClusterError::JetStream`] when the store refuses it.
pub(crate) async fn upload(
    store: &object_store::ObjectStore,
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
    if info(store).await.is_some_and(|i| i.seq >= seq) {
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
        ]),
        ..Default::default()
    };
    store
        .put(meta, &mut bytes.as_slice())
        .await
        .map_err(|e| js_err("putting the snapshot")(&e))?;
    Ok(Some(seq))
}

/// Takes the world's snapshot into `path` (which must not exist) if there is one of this
/// world (checked as a node checks its own file: generator, field settings, world tag)
/// and returns its position; `None` (and no file) if there is none or it does not check,
/// said in the log: the node then starts from the genesis.
pub(crate) async fn download(
    store: &object_store::ObjectStore,
    genesis: &Genesis,
    path: &Path,
) -> Option<Position> {
    let start = Instant::now();
    let snapshot = info(store).await?;
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
    if let Err(e) = read.await {
        tracing::warn!("the world's snapshot could not be read: {e}; replaying the whole stream");
        return None;
    }
    let part = part_path(path);
    let write = || -> Result<Position, String> {
        std::fs::write(&part, &bytes).map_err(|e| e.to_string())?;
        let at = super::check_snapshot(&part, genesis)
            .map_err(|e| crate::error_chain(&e))?
            .ok_or("it is empty")?;
        loam_store::remove_world_files(path);
        std::fs::rename(&part, path).map_err(|e| e.to_string())?;
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

/// Puts each finished copy of the node's world file as the snapshot, in turn, until the
/// writer is gone. A copy that fails is said and skipped (the next one is tried).
pub(crate) async fn uploader(
    store: object_store::ObjectStore,
    node: u16,
    mut copies: UnboundedReceiver<PathBuf>,
) {
    while let Some(copy) = copies.recv().await {
        let start = Instant::now();
        match upload(&store, &copy, node).await {
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
