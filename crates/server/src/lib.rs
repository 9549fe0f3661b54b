//! # loam-server
//!
//! Loam's authoritative server: one process, one world file, everyone's edits in one order.
//! It speaks [`protocol`] (the crate `loam-protocol`) over WebSocket; `loam-client` is the
//! other end, `loam serve` runs it.
//!
//! ```text
//!  WebSocket ──▶ connection task ──(commands)──▶ ordering thread ──▶ world store (durable)
//!  (axum)        hello, limits,                  validate, number, apply,
//!                rate, decode                    append, then broadcast ──▶ outboxes ──▶ clients
//! ```
//!
//! One thread owns the [`Store`](loam_store::Store), the field and the undo history. It takes
//! the ops that arrived together as a group: each is validated and applied through the
//! history (a refused op changes nothing), numbered, and the group is appended to the world
//! store in one transaction; only when that returns are the ops broadcast, so an op a client
//! saw acknowledged survives a crash. Any other command (a join, a viewer move, a hash)
//! waits until the group before it is durable and broadcast. The block world's physics steps
//! run on the same thread, one at a time between commands (`steps.rs`); its rules (colliders,
//! what a terrain op undermines, edit budgets, the loader) are `loam-session`'s.
//!
//! Each client gets the ops whose changed bricks fall in its region (its viewer's box plus a
//! margin, see [`protocol::interest`]), its own ops always, and the bricks of regions it moves
//! into, nearest first. A client too slow to take its messages, over its op rate, sending
//! oversized or malformed messages, is disconnected with a reason; the server goes on.
//!
//! Determinism: every map that reaches the field or the wire is a `BTreeMap`; the field
//! computes the same bits on every machine (docs/architecture.md), so a client that applies
//! the same ops in the same order over the same bricks holds the same bricks as the server.
//!
//! ```no_run
//! # async fn run() -> Result<(), loam_server::ServerError> {
//! use std::sync::Arc;
//! use loam_field::{CaveSettings, Generator, NoiseTerrainSettings};
//! use loam_server::{GeneratorFactory, ServerConfig, serve};
//!
//! let generator: GeneratorFactory = Arc::new(|_json: &str| {
//!     Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
//!         .map_err(|e| e.to_string())
//! });
//! let server = serve(ServerConfig::new("world.loam", generator)).await?;
//! println!("clients connect to {}", server.url());
//! server.shutdown().await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod accept;
mod backups;
mod blocks;
pub mod cluster;
mod conn;
mod error;
mod frames;
mod ground;
mod latency;
mod lumps;
mod metered;
mod order;
mod presence;
mod process;
mod regions;
mod resume;
mod send;
mod steps;
mod writer;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::response::Response;
use axum::routing::get;
use loam_blocks::{BlocksFile, IslandSettings};

pub use backups::BackupPlan;
pub use error::{ServerError, error_chain};
pub use ground::GroundWork;
pub use latency::{Percentiles, ServerLatency};
use loam_field::FieldHash;
pub use loam_protocol as protocol;
pub use loam_protocol::{GeneratorFactory, WS_PATH};
pub use process::disable_transparent_huge_pages;
use tokio::sync::{mpsc, oneshot, watch};

use crate::protocol::{BrickBox, DEFAULT_MAX_MESSAGE_BYTES, READ_BUFFER, WorldMeta};
use order::{Command, Order};

/// Limits that protect the server from clients.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Largest message accepted, bytes. Default [`DEFAULT_MAX_MESSAGE_BYTES`] (1 MiB).
    pub max_message_bytes: usize,
    /// Most clients connected at once; more are refused, except a client resuming with its
    /// key while its old connection still counts (it replaces that one). Default 128
    /// (`loam serve --max-clients` defaults to 256).
    pub max_clients: usize,
    /// Messages (ops, viewer moves, hash requests; pings and pongs too) per second a client
    /// may send on average. Default 1000.
    pub ops_per_second: f64,
    /// Messages a client may send in a burst above the average rate. Default 1000.
    pub op_burst: f64,
    /// Largest viewer radius, metres. Default 512.
    pub max_view_radius_m: f64,
    /// Messages waiting for a client before it is disconnected as too slow. Default 16384.
    pub outbox_messages: usize,
    /// Bytes waiting for a client before it is disconnected as too slow, at least
    /// `max_message_bytes`. Default 256 MiB. Counted as well as messages: a client that
    /// asks for catch-ups (viewer moves, a few bytes each, answered by up to a megabyte of
    /// bricks) and does not read them would otherwise hold the server's memory. A join's
    /// frames (generator parts, snapshot) may wait on top of it; a viewer move whose
    /// catch-up alone is larger drops the client: the default holds some 30 000 edited
    /// bricks of about 8 KiB, many times the bricks a terrain's surface crosses in the
    /// largest view (512 m: about 33 × 33 columns of bricks).
    pub outbox_bytes: usize,
    /// Bytes of catch-ups (the bricks of regions a viewer moves into) a client is sent per
    /// second on average; `f64::INFINITY` for no limit. Default 16 MiB/s. A move over the
    /// budget is not refused: it waits, the client's latest move replacing any earlier one
    /// still waiting, and is served once the budget allows (within a tick, 50 ms, of it).
    /// Without it, a client jumping its viewer back and forth (a few bytes a move) drew a
    /// megabyte of catch-up each, 230 MB/s, and slowed everyone's ops. Each catch-up counts
    /// at least 64 KiB (finding a region's bricks costs the server whether or not it finds
    /// any). A join's catch-up is never held back but is charged too (a client resuming
    /// with its key keeps its budget), so moves right after a large join wait.
    pub catch_up_bytes_per_second: f64,
    /// Catch-up bytes a client may be sent at once above the average rate: a client that
    /// has not moved for a while may jump this far at once. Default 64 MiB.
    pub catch_up_burst_bytes: f64,
    /// How long a new connection may take to send its request head (HTTP, the upgrade to a
    /// WebSocket), and then how long it may take to say hello. Default 10 s.
    pub hello_timeout: Duration,
    /// Bytes per second a client may send on average, WebSocket framing included;
    /// `f64::INFINITY` for no limit. Default 8 MiB/s, with a burst of twice
    /// `max_message_bytes` and 1 MiB more. Over it, the client is disconnected ("more than …
    /// bytes/s received"). The message rate above counts whole messages only; this counts
    /// what tungstenite assembles them from (continuation and control frames), which a client
    /// could otherwise send without end (`metered.rs`). At the default message rate a client
    /// may average 8 KiB a message; ops are a few hundred bytes.
    pub received_bytes_per_second: f64,
    /// Open connections allowed beyond `max_clients`: those still in their HTTP upgrade or
    /// hello, refused ones closing, and a dead link that a resuming client replaces. Past
    /// `max_clients` plus this, a new connection is answered `503 Service Unavailable` and
    /// closed at once (`accept.rs`). Default 256. Without a cap, a flood of connections that
    /// never say hello (each held up to `hello_timeout`) could use up the process's file
    /// descriptors, which the world store needs too.
    pub max_waiting_connections: usize,
    /// Field samples a client's terrain ops may cover per second on average
    /// ([`loam_field::edit_samples`]: an op's box, band included; an undo or redo, the
    /// samples it changed); `f64::INFINITY` for no limit. Default 2 million (a 1 m dig is
    /// 343, an 8 m brush stroke at 60 ops/s some 0.6 million a second, a 64 m ball 2.35
    /// million), with a burst of `edit_samples_burst`. An op is taken while the client's
    /// balance is above zero and charged in full, so a large op leaves a debt the client
    /// waits out; an op that comes while the balance is at or below zero is refused (by op
    /// id, with the reason; the world unchanged). The balance is the client's (by id), not
    /// its connection's: reconnecting does not refill it (`loam_session::EditBudgets`). The message rate counts messages, not work: without this, one
    /// client sending 10 balls of 64 m a second (far under the rate) stalled everyone's
    /// ops for a minute and grew the world file by 145 MB (a fresh-user trial).
    pub edit_samples_per_second: f64,
    /// The samples of terrain ops a client may have in hand at once above the average.
    /// Default 8 million.
    pub edit_samples_burst: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_clients: 128,
            ops_per_second: 1000.0,
            op_burst: 1000.0,
            max_view_radius_m: 512.0,
            outbox_messages: 16384,
            outbox_bytes: 256 << 20,
            catch_up_bytes_per_second: 16.0 * 1024.0 * 1024.0,
            catch_up_burst_bytes: 64.0 * 1024.0 * 1024.0,
            hello_timeout: Duration::from_secs(10),
            received_bytes_per_second: 8.0 * 1024.0 * 1024.0,
            max_waiting_connections: 256,
            edit_samples_per_second: 2.0e6,
            edit_samples_burst: 8.0e6,
        }
    }
}

/// How to run a server ([`serve`]).
#[derive(Clone)]
pub struct ServerConfig {
    /// The world file (loam-store), opened exclusively.
    pub world: PathBuf,
    /// Address to listen on. Default `127.0.0.1:7878` (loopback only); port 0 picks one.
    pub listen: SocketAddr,
    /// If set, clients must send this token in their hello.
    pub token: Option<String>,
    /// Builds the generator from the world's generator JSON.
    pub generator: GeneratorFactory,
    /// Limits on clients.
    pub limits: Limits,
    /// Margin around each viewer's box, metres, within which ops and bricks are sent too.
    /// Default 16.
    pub interest_margin_m: f64,
    /// Ops kept in memory for reconnecting clients to resume from. Default 65 536.
    pub resume_ops: usize,
    /// Bake the world every this many ops (0: only at a clean shutdown). Default 100 000.
    pub bake_every_ops: u64,
    /// Bricks the server's field keeps decoded (96 KiB each). Default 512.
    pub hot_bricks: usize,
    /// How a dig's cut-loose lumps of terrain are found (they fall as pieces of blocks);
    /// `None` leaves them hanging. Default `Some(IslandSettings::default())`: the digs
    /// queued since the last search are searched together (those near each other as one box)
    /// on the ground worker thread, beside the ordering of ops; what it finds is checked
    /// again on the field as it is then, and falls (within about a tick, 50 ms, on a quiet
    /// server; about half a second at 20 000 ops/s on 2 cores).
    pub islands: Option<IslandSettings>,
    /// Periodic copies of the world while it is served (the world is locked against other
    /// processes, so this is how it is backed up live). Default `None`.
    pub backups: Option<BackupPlan>,
    /// Run as a node of a world on NATS JetStream ([`cluster`]): `world` is then this
    /// node's own world file (its snapshot of the stream, made from the world's genesis if
    /// missing), clients' ops go through the stream, the generator comes from the genesis,
    /// and `islands` applies while the node holds the world's block lease
    /// (`cluster/blocks.rs`). Default `None`: the single server on its world file.
    pub node: Option<cluster::NodeConfig>,
    /// A folder of files served over HTTP at every path but [`WS_PATH`]: the browser
    /// editor's bundle (`tools/web_build.sh DIR`), so a friend joins with a browser from the
    /// same address. It must hold an `index.html`. Default `None`: only the WebSocket.
    pub web: Option<PathBuf>,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("world", &self.world)
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// The defaults for `world`, with `generator`.
    pub fn new(world: impl Into<PathBuf>, generator: GeneratorFactory) -> Self {
        Self {
            world: world.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            token: None,
            generator,
            limits: Limits::default(),
            interest_margin_m: 16.0,
            resume_ops: 1 << 16,
            bake_every_ops: 100_000,
            hot_bricks: 512,
            islands: Some(IslandSettings::default()),
            backups: None,
            node: None,
            web: None,
        }
    }

    fn validate(&self) -> Result<(), ServerError> {
        let bad = |name, why: &str| {
            Err(ServerError::Config {
                name,
                why: why.into(),
            })
        };
        if let Some(dir) = &self.web
            && !dir.join("index.html").is_file()
        {
            return bad("web", &format!("{dir:?} holds no index.html"));
        }
        let l = &self.limits;
        if l.max_message_bytes < 4096 {
            return bad("max_message_bytes", "at least 4096");
        }
        if !(l.ops_per_second > 0.0 && l.ops_per_second.is_finite()) {
            return bad("ops_per_second", "a positive number");
        }
        if !(l.op_burst >= 1.0 && l.op_burst.is_finite()) {
            return bad("op_burst", "at least 1");
        }
        if !(l.max_view_radius_m >= 0.0 && l.max_view_radius_m <= 1e5) {
            return bad("max_view_radius_m", "in [0, 100000]");
        }
        if l.outbox_messages < 16 {
            return bad("outbox_messages", "at least 16");
        }
        if l.outbox_bytes < l.max_message_bytes {
            return bad("outbox_bytes", "at least max_message_bytes");
        }
        if l.catch_up_bytes_per_second.is_nan() || l.catch_up_bytes_per_second <= 0.0 {
            return bad("catch_up_bytes_per_second", "a positive number or infinity");
        }
        if l.catch_up_burst_bytes.is_nan() || l.catch_up_burst_bytes <= 0.0 {
            return bad("catch_up_burst_bytes", "a positive number or infinity");
        }
        if l.received_bytes_per_second.is_nan() || l.received_bytes_per_second <= 0.0 {
            return bad("received_bytes_per_second", "a positive number or infinity");
        }
        for (what, v) in [
            ("edit_samples_per_second", l.edit_samples_per_second),
            ("edit_samples_burst", l.edit_samples_burst),
        ] {
            if v.is_nan() || v <= 0.0 {
                return bad(what, "a positive number or infinity");
            }
        }
        if !(self.interest_margin_m >= 0.0 && self.interest_margin_m <= 1e4) {
            return bad("interest_margin_m", "in [0, 10000]");
        }
        if let Some(b) = &self.backups {
            b.check()?;
        }
        if let Some(every) = self.node.as_ref().and_then(|n| n.snapshot_every)
            && !(Duration::from_secs(1)..=Duration::from_secs(30 * 86_400)).contains(&every)
        {
            return bad("snapshot_every", "in [1 s, 30 days]");
        }
        Ok(())
    }
}

/// What the server is doing ([`ServerHandle::status`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerStatus {
    /// The last sequence number.
    pub seq: u64,
    /// Clients connected.
    pub clients: usize,
    /// Clients' ops accepted since the server started.
    pub accepted: u64,
    /// Ops the server made itself since it started (a lump of terrain a dig cut loose: the
    /// terrain ops that take it out of the field and the block op that drops it). The log
    /// grows by `accepted + made`.
    pub made: u64,
    /// Ops refused since the server started.
    pub refused: u64,
    /// Held blocks.
    pub blocks: usize,
    /// Pieces (falling and rubble).
    pub pieces: usize,
    /// Pieces falling (not yet at rest).
    pub falling: usize,
    /// On a node of a world on NATS: the epoch under which this node decides the world's
    /// blocks, if it does (`cluster/blocks.rs`); `None` elsewhere.
    pub block_authority: Option<u64>,
    /// The physics step, in the world file's numbering.
    pub step: u64,
    /// Digs waiting for, or under, the search for the lumps of terrain they cut loose (that
    /// search may add ops of the server's own). With none, and no client sending, the field
    /// stays as it is.
    pub digs_pending: usize,
    /// What the ground worker (lump searches and terrain colliders, off the ordering thread)
    /// did since the server started.
    pub ground: GroundWork,
    /// Where the server's time went since it started: the server's part of each client op's
    /// round trip and the part of it queued for the ordering thread, the ordering thread's
    /// work per op, the writer's group commits and their reports, the ticks, the physics
    /// steps, the bakes' snapshots, the ground worker's results.
    pub latency: ServerLatency,
}

/// What the connection tasks share.
pub(crate) struct Shared {
    pub commands: mpsc::Sender<Command>,
    pub limits: Limits,
    pub token: Option<String>,
    pub active: AtomicUsize,
    pub next_conn: AtomicU64,
    /// The ordering thread's [`order::Order::resume_secret`]: a client resuming with its
    /// key is let in past [`Limits::max_clients`] (it replaces its own connection).
    pub resume_secret: [u8; 32],
    /// Catch-up encodings running at once, all connections together: at most one per CPU,
    /// so that many clients moving at once queue their encodings instead of taking every
    /// core from the ordering thread ([`frames::CatchUpJob::encode`]).
    pub encodes: Arc<tokio::sync::Semaphore>,
    /// Each client's message bucket as its last connection left it, by client id, so that a
    /// resumed connection goes on with it: reconnecting must not refill it (a client that
    /// reconnected after each rate-limit drop sent about 3× the limit). The most recent
    /// [`KEPT_BUCKETS`] clients are kept.
    pub message_buckets: std::sync::Mutex<std::collections::BTreeMap<u64, loam_session::Bucket>>,
}

/// Most clients whose message buckets are kept after they disconnect (oldest ids go first).
pub(crate) const KEPT_BUCKETS: usize = 4096;

/// A running server. Dropping it leaves the server running until the runtime ends; call
/// [`ServerHandle::shutdown`] for a clean stop (clients told, world baked, file closed).
pub struct ServerHandle {
    addr: SocketAddr,
    commands: mpsc::Sender<Command>,
    http: tokio::task::JoinHandle<()>,
    ticker: tokio::task::JoinHandle<()>,
    /// A node's publisher, follower and lease keeper (`cluster/node.rs`).
    node_tasks: cluster::node::NodeTasks,
    /// Where a node started in the world's stream.
    node_start: Option<cluster::NodeStart>,
    order: Option<std::thread::JoinHandle<Result<(), ServerError>>>,
    stopped: watch::Receiver<Option<String>>,
}

/// Opens the world, binds `config.listen` and starts serving (WebSocket at [`WS_PATH`]).
/// Returns once clients can connect. Needs a tokio runtime.
///
/// # Errors
/// [`ServerError::Config`] for a bad setting; [`ServerError::Store`] if the world cannot be opened
/// or loaded (in use by another process, damaged, newer format); [`ServerError::Generator`] if
/// its generator cannot be built; [`ServerError::Io`] if the address cannot be bound.
pub async fn serve(config: ServerConfig) -> Result<ServerHandle, ServerError> {
    config.validate()?;
    // The address first: opening the world writes to it (WAL mode, a journal beside it), and
    // a server that cannot listen (an address in use, not this machine's) must leave the
    // file as it was.
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let mut cfg = config.clone();
    // A node: the world's genesis from the stream, and this node's world file made from it
    // (or checked against it) before the ordering thread opens it.
    let node = match &config.node {
        Some(n) => Some(cluster::node::prepare(n, &mut cfg).await?),
        None => None,
    };
    let mut order = tokio::task::spawn_blocking(move || Order::open(&cfg))
        .await
        .map_err(|e| ServerError::ServerStopped(e.to_string()))??;
    let (tx, rx) = mpsc::channel(4096);
    let mut node_tasks = cluster::node::NodeTasks::default();
    let node_start = node.as_ref().map(cluster::node::Prepared::start_info);
    if let Some(prepared) = node {
        node_tasks = prepared.start(&mut order, tx.clone());
    }
    let resume_secret = order.clients.resume_secret;
    let (stop_tx, stop_rx) = watch::channel(None);
    let thread = std::thread::Builder::new()
        .name("loam-server-order".into())
        .spawn(move || {
            let r = order.run(rx);
            let why = match &r {
                Ok(()) => "shut down".to_string(),
                Err(e) => crate::error_chain(e),
            };
            let _ = stop_tx.send(Some(why));
            r
        })?;
    let shared = Arc::new(Shared {
        commands: tx.clone(),
        limits: config.limits.clone(),
        token: config.token.clone(),
        active: AtomicUsize::new(0),
        next_conn: AtomicU64::new(1),
        resume_secret,
        message_buckets: Default::default(),
        encodes: Arc::new(tokio::sync::Semaphore::new(
            std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
        )),
    });
    let mut router = Router::new().route(WS_PATH, get(upgrade));
    if let Some(dir) = &config.web {
        router = router.fallback_service(tower_http::services::ServeDir::new(dir));
    }
    let router = router.with_state(shared);
    let received = (
        config.limits.received_bytes_per_second,
        received_burst(config.limits.max_message_bytes),
    );
    let http = tokio::spawn(accept::serve(
        listener,
        router,
        accept::Admission {
            head_timeout: config.limits.hello_timeout,
            received,
            max_open: (config.limits.max_clients)
                .saturating_add(config.limits.max_waiting_connections),
        },
    ));
    let tick = tx.clone();
    let ticker = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_millis(50));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            every.tick().await;
            if tick.send(Command::Tick).await.is_err() {
                break;
            }
        }
    });
    Ok(ServerHandle {
        addr,
        commands: tx,
        http,
        ticker,
        node_tasks,
        node_start,
        order: Some(thread),
        stopped: stop_rx,
    })
}

/// The most bytes a connection's WebSocket may hold written but not yet taken by the socket:
/// the writer's batch (tungstenite flushes past its 128 KiB write buffer) and one message
/// of up to `max` bytes, twice over. tungstenite's default is no limit, and it answers every
/// ping with a pong written to that buffer: a fresh-user trial pinged without reading and
/// took the server from 81 MB to 4.1 GB in 16 s (pings now also count against the message
/// rate). Past the cap a pong waits for room and a write of ours fails, which closes the
/// connection with the error; our own messages wait in the outbox (`frames.rs`), not here.
fn write_buffer_cap(max: usize) -> usize {
    max.saturating_add(128 << 10).saturating_mul(2)
}

/// The burst of [`Limits::received_bytes_per_second`]: two messages of `max` bytes and 1 MiB.
fn received_burst(max: usize) -> f64 {
    2.0 * max as f64 + f64::from(1u32 << 20)
}

async fn upgrade(
    ws: WebSocketUpgrade,
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
) -> Response {
    let max = shared.limits.max_message_bytes;
    // tungstenite zero-fills up to `read_buffer_size` bytes before every read (128 KiB by
    // default: most of a small message's cost).
    ws.max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(READ_BUFFER)
        .max_write_buffer_size(write_buffer_cap(max))
        .on_upgrade(move |socket| conn::run(socket, shared, peer))
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where a node started in the world's stream (`None` for a server of a world file).
    pub fn node_start(&self) -> Option<cluster::NodeStart> {
        self.node_start
    }

    /// The URL clients connect to, `ws://ADDR/ws`.
    pub fn url(&self) -> String {
        format!("ws://{}{WS_PATH}", self.addr)
    }

    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, ServerError> {
        let (tx, rx) = oneshot::channel();
        let gone = || ServerError::ServerStopped(self.stop_reason());
        self.commands.send(make(tx)).await.map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }

    fn stop_reason(&self) -> String {
        self.stopped
            .borrow()
            .clone()
            .unwrap_or_else(|| "stopped".into())
    }

    /// The server's field hash over `region` (every brick when `None`) and the sequence number
    /// it is at, once every op before the call is durable.
    ///
    /// # Errors
    /// [`ServerError::ServerStopped`].
    pub async fn hash(&self, region: Option<BrickBox>) -> Result<(u64, FieldHash), ServerError> {
        self.ask(|reply| Command::HashFor { region, reply }).await
    }

    /// The server's block hash over `region` ([`crate::protocol::block_hash`]; every block when
    /// `None`), its block world as saved, and the sequence number they are at, once every
    /// op before the call is durable.
    ///
    /// # Errors
    /// [`ServerError::ServerStopped`].
    pub async fn blocks(
        &self,
        region: Option<BrickBox>,
    ) -> Result<(u64, [u8; 32], BlocksFile), ServerError> {
        self.ask(|reply| Command::BlocksFor { region, reply }).await
    }

    /// Where the server's time went since the last call (or its start), as
    /// [`ServerStatus::latency`] reports it since the start; starts a new window. It does not
    /// wait for the ops in flight: they count in the next window. A load benchmark takes one
    /// after its warm-up and one at its end.
    ///
    /// # Errors
    /// [`ServerError::ServerStopped`].
    pub async fn take_latency(&self) -> Result<ServerLatency, ServerError> {
        self.ask(|reply| Command::TakeLatency { reply }).await
    }

    /// The sequence number, clients, op counts and blocks.
    ///
    /// # Errors
    /// [`ServerError::ServerStopped`].
    pub async fn status(&self) -> Result<ServerStatus, ServerError> {
        self.ask(|reply| Command::Status { reply }).await
    }

    /// The world's metadata as clients get it.
    ///
    /// # Errors
    /// [`ServerError::ServerStopped`].
    pub async fn world(&self) -> Result<WorldMeta, ServerError> {
        self.ask(|reply| Command::Meta { reply }).await
    }

    /// Waits until the server stops by itself (its store failed) and says why. Returns at
    /// once if it has stopped.
    pub async fn stopped(&self) -> String {
        let mut rx = self.stopped.clone();
        let reason = rx.wait_for(|r| r.is_some()).await.map(|r| r.clone());
        reason.ok().flatten().unwrap_or_else(|| "stopped".into())
    }

    /// Stops cleanly: every client is told and disconnected, the world is baked and the file
    /// closed.
    ///
    /// # Errors
    /// The store's error if the last appends or the bake failed, or the one that stopped the
    /// server earlier.
    pub async fn shutdown(mut self) -> Result<(), ServerError> {
        // A node gives up its leases first (another node may decide the blocks at once),
        // then its follower stops; ops its publisher still holds were never acknowledged
        // to their authors, who send them again (to any node).
        self.node_tasks.stop().await;
        let (tx, rx) = oneshot::channel();
        let _ = self.commands.send(Command::Shutdown { reply: tx }).await;
        let _ = rx.await;
        self.ticker.abort();
        let thread = self.order.take().expect("joined once");
        let r = tokio::task::spawn_blocking(move || thread.join())
            .await
            .map_err(|e| ServerError::ServerStopped(e.to_string()))?
            .map_err(|_| ServerError::ServerStopped("the ordering thread panicked".into()))?;
        // Awaited: the listener is closed when this returns, so a server started next on
        // the same address (a restart) can bind it.
        self.http.abort();
        let _ = (&mut self.http).await;
        r
    }
}
