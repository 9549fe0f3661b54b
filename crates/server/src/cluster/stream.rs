//! The world's stream on JetStream: connecting, making it, reading its genesis, and
//! replaying it into a world file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_nats::header::NATS_MESSAGE_ID;
use async_nats::jetstream::context::GetStreamErrorKind;
use async_nats::jetstream::stream::LastRawMessageErrorKind;
use async_nats::jetstream::{self, consumer::DeliverPolicy, stream::StorageType};
use async_nats::{ConnectOptions, HeaderMap};
use futures_util::StreamExt;
use loam_field::{Field, FieldHash, History, Journal};
use loam_protocol::GeneratorFactory;
use loam_protocol::interest::generator_fingerprint;
use loam_store::{BlockLogEntry, LogRecord, Store};

use super::blocks::{BlockApplied, BlockReplica, Outcome, Verdict};
use super::log::{Applied, Names, apply, valid_world_id};
use super::{ClusterError, GENESIS_PART, Genesis, NodeConfig, hex};

/// How long JetStream remembers a message id: an op sent again within it (a client that
/// reconnects, to any node, and resends what was not acknowledged) is logged once.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(15 * 60);

/// How long a request JetStream does not answer is tried again before it is an error: a
/// cluster that lost a server takes some seconds to elect new leaders.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// How long making a consumer may take before it is given up (and made again, the stream
/// read message by message meanwhile): on loopback it takes milliseconds.
pub const CONSUMER_PATIENCE: Duration = Duration::from_secs(3);

/// Runs `ask` until it answers `Ok`, for up to [`PATIENCE`]; its last error is then a
/// [`ClusterError::JetStream`] about `what`.
async fn patiently<T, F, Fut>(what: &'static str, mut ask: F) -> Result<T, ClusterError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        match ask().await {
            Ok(v) => return Ok(v),
            Err(why) if tokio::time::Instant::now() >= deadline => {
                return Err(ClusterError::JetStream { what, why });
            }
            Err(why) => {
                tracing::warn!("JetStream, {what}: {why}; trying again");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}

/// The header that numbers the genesis' parts, `"i/n"`.
const PART_HEADER: &str = "Loam-Genesis-Part";

/// An open world on JetStream: the client, the stream and its genesis.
pub struct WorldStream {
    /// The JetStream context.
    pub js: jetstream::Context,
    /// The world's stream.
    pub stream: jetstream::stream::Stream,
    /// Its names.
    pub names: Names,
    /// Its genesis.
    pub genesis: Genesis,
    /// Whether NATS is connected now: set each time the client connects again after losing
    /// it (a consumer then has to be made again: on NATS 2.9 a pull consumer does not
    /// survive a server restart), and the node's clients are told (`order/logged.rs`). A
    /// watch, so that a reconnection is never missed by a task busy elsewhere when it came.
    pub(crate) up: tokio::sync::watch::Receiver<bool>,
}

pub(crate) fn js_err(what: &'static str) -> impl Fn(&dyn std::fmt::Display) -> ClusterError {
    move |e| ClusterError::JetStream {
        what,
        why: e.to_string(),
    }
}

/// Connects to NATS at `url`, one server or several of a cluster separated by commas
/// (`nats://a:4222,nats://b:4222`), failing fast when none answers and reconnecting for
/// ever once connected (to any server of the cluster).
pub(crate) async fn connect(
    url: &str,
    timeout: Duration,
    up: Arc<tokio::sync::watch::Sender<bool>>,
) -> Result<async_nats::Client, ClusterError> {
    let servers: Vec<&str> = url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    if servers.is_empty() {
        return Err(ClusterError::Unreachable {
            url: url.into(),
            why: "no server given (--nats takes nats://HOST:PORT, or several separated by \
                  commas)"
                .into(),
        });
    }
    let client = ConnectOptions::new()
        .name("loam")
        .connection_timeout(timeout)
        .reconnect_delay_callback(|n| Duration::from_millis((n as u64 * 100).min(2_000)))
        .event_callback(move |event| {
            let up = up.clone();
            async move {
                match event {
                    async_nats::Event::Connected => {
                        up.send_replace(true);
                    }
                    async_nats::Event::Disconnected => {
                        up.send_replace(false);
                        tracing::warn!("lost NATS: ops wait until it is back");
                    }
                    _ => {}
                }
            }
        })
        .connect(servers)
        .await
        .map_err(|e| ClusterError::Unreachable {
            url: url.into(),
            why: e.to_string(),
        })?;
    // A server without JetStream answers nothing on its API: said at once, rather than
    // after the patient retries of the first JetStream request.
    match client.request("$JS.API.INFO", "".into()).await {
        Err(e) if e.kind() == async_nats::client::RequestErrorKind::NoResponders => {
            Err(ClusterError::NoJetStream { url: url.into() })
        }
        _ => Ok(client),
    }
}

fn names_of(world_id: &str) -> Result<Names, ClusterError> {
    if !valid_world_id(world_id) {
        return Err(ClusterError::BadWorldId {
            id: world_id.into(),
        });
    }
    Ok(Names {
        world: world_id.into(),
    })
}

/// Makes world `world_id` on the NATS server at `url`: a stream `LOAM_<world_id>` (file
/// storage, `replicas` copies: 1 on one server, 3 on a 3-server cluster) and its genesis
/// from `generator_json` and `field` (the generator is built with `generator` to take its
/// fingerprint). Returns the genesis.
///
/// # Errors
/// [`ClusterError::BadWorldId`], [`ClusterError::Unreachable`],
/// [`ClusterError::WorldExists`] (nothing is changed then), [`ClusterError::Generator`],
/// [`ClusterError::JetStream`].
pub async fn create_world(
    url: &str,
    world_id: &str,
    replicas: usize,
    generator_json: &str,
    field: loam_field::FieldSettings,
    heightmap_blake3: Option<String>,
    generator: &GeneratorFactory,
) -> Result<Genesis, ClusterError> {
    let names = names_of(world_id)?;
    field.validate()?;
    let g = generator(generator_json).map_err(ClusterError::Generator)?;
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| ClusterError::Generator(e.to_string()))?;
    let genesis = Genesis {
        format: "loam-genesis".into(),
        version: 1,
        world_id: world_id.into(),
        generator_json: generator_json.into(),
        field,
        heightmap_blake3,
        fingerprint: hex(&generator_fingerprint(&g, &field)),
        resume_secret: hex(&secret),
    };
    let up = Arc::new(tokio::sync::watch::channel(true).0);
    let client = connect(url, Duration::from_secs(5), up).await?;
    let js = jetstream::new(client);
    if let Ok(mut s) = js.get_stream(names.stream()).await {
        let messages = s.info().await.map_or(0, |i| i.state.messages);
        return Err(ClusterError::WorldExists {
            world_id: world_id.into(),
            url: url.into(),
            stream: names.stream(),
            messages,
        });
    }
    let stream = js
        .create_stream(jetstream::stream::Config {
            name: names.stream(),
            subjects: vec![names.all()],
            storage: StorageType::File,
            num_replicas: replicas.max(1),
            duplicate_window: DUPLICATE_WINDOW,
            description: Some(format!("Loam world {world_id}: genesis and ops, in order")),
            ..Default::default()
        })
        .await
        .map_err(|e| js_err("creating the stream")(&e))?;
    let json = serde_json::to_vec(&genesis).expect("genesis serialises");
    let parts: Vec<&[u8]> = json.chunks(GENESIS_PART).collect();
    for (i, part) in parts.iter().enumerate() {
        let mut h = HeaderMap::new();
        h.insert(NATS_MESSAGE_ID, format!("genesis-{i}"));
        h.insert(PART_HEADER, format!("{}/{}", i + 1, parts.len()));
        let ack = js
            .publish_with_headers(names.meta(), h, part.to_vec().into())
            .await
            .map_err(|e| js_err("publishing the genesis")(&e))?
            .await
            .map_err(|e| js_err("publishing the genesis")(&e))?;
        if ack.duplicate {
            // Another `world new` of this id made the same stream at the same moment (JetStream
            // creates an identical stream twice without a word) and its genesis is the one kept.
            let _ = stream;
            return Err(ClusterError::WorldExists {
                world_id: world_id.into(),
                url: url.into(),
                stream: names.stream(),
                messages: ack.sequence,
            });
        }
        if ack.sequence != i as u64 + 1 {
            // Someone published into the new stream at the same time.
            let _ = stream;
            return Err(ClusterError::Genesis {
                stream: names.stream(),
                world_id: world_id.into(),
                why: format!(
                    "genesis part {} landed at sequence {}, not {}",
                    i + 1,
                    ack.sequence,
                    i + 1
                ),
            });
        }
    }
    Ok(genesis)
}

impl WorldStream {
    /// Opens world `cfg.world_id` on `cfg.nats_url` and reads its genesis.
    ///
    /// # Errors
    /// [`ClusterError::BadWorldId`], [`ClusterError::Unreachable`],
    /// [`ClusterError::NoSuchWorld`], [`ClusterError::Genesis`] (not a Loam world, another
    /// world's stream, a genesis that does not read), [`ClusterError::JetStream`].
    pub async fn open(cfg: &NodeConfig) -> Result<Self, ClusterError> {
        let names = names_of(&cfg.world_id)?;
        let (up_tx, up) = tokio::sync::watch::channel(true);
        let client = connect(&cfg.nats_url, cfg.connect_timeout, Arc::new(up_tx)).await?;
        let js = jetstream::new(client);
        let stream = patiently("looking up the world's stream", || async {
            match js.get_stream(names.stream()).await {
                Ok(s) => Ok(Ok(s)),
                Err(e) => match e.kind() {
                    GetStreamErrorKind::JetStream(j)
                        if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND =>
                    {
                        Ok(Err(ClusterError::NoSuchWorld {
                            world_id: cfg.world_id.clone(),
                            url: cfg.nats_url.clone(),
                            stream: names.stream(),
                        }))
                    }
                    _ => Err(e.to_string()),
                },
            }
        })
        .await??;
        let bad = |why: String| ClusterError::Genesis {
            stream: names.stream(),
            world_id: cfg.world_id.clone(),
            why,
        };
        let mut json = Vec::new();
        let mut seq = 1;
        loop {
            let m = patiently("reading the genesis", || async {
                match stream.get_raw_message(seq).await {
                    Ok(m) => Ok(Ok(m)),
                    Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => {
                        Ok(Err(bad(format!("it has no message {seq}"))))
                    }
                    Err(e) => Err(e.to_string()),
                }
            })
            .await??;
            if m.subject.as_str() != names.meta() {
                return Err(bad(format!(
                    "message {seq} is on {}, not {}",
                    m.subject,
                    names.meta()
                )));
            }
            let part = m
                .headers
                .get(PART_HEADER)
                .map(|v| v.as_str().to_string())
                .ok_or_else(|| bad(format!("message {seq} has no {PART_HEADER} header")))?;
            let (i, n) = part
                .split_once('/')
                .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
                .ok_or_else(|| bad(format!("part {part:?} of message {seq} does not read")))?;
            if i != seq || n < i {
                return Err(bad(format!("message {seq} says it is part {part}")));
            }
            json.extend_from_slice(&m.payload);
            if i == n {
                break;
            }
            seq += 1;
        }
        let genesis: Genesis =
            serde_json::from_slice(&json).map_err(|e| bad(format!("its JSON: {e}")))?;
        if genesis.format != "loam-genesis" || genesis.version != 1 {
            return Err(bad(format!(
                "format {:?} version {}, not loam-genesis 1",
                genesis.format, genesis.version
            )));
        }
        if genesis.world_id != cfg.world_id {
            return Err(bad(format!("it is world {:?}'s", genesis.world_id)));
        }
        Ok(Self {
            js,
            stream,
            names,
            genesis,
            up,
        })
    }

    /// Builds the world's generator with `generator`, refusing one whose fingerprint
    /// differs from the genesis' (another build, another generator).
    ///
    /// # Errors
    /// [`ClusterError::Generator`], [`ClusterError::OtherGenerator`].
    pub fn generator(
        &self,
        generator: &GeneratorFactory,
    ) -> Result<loam_field::Generator, ClusterError> {
        let g = generator(&self.genesis.generator_json).map_err(ClusterError::Generator)?;
        let ours = hex(&generator_fingerprint(&g, &self.genesis.field));
        if ours != self.genesis.fingerprint {
            return Err(ClusterError::OtherGenerator {
                world_id: self.genesis.world_id.clone(),
                ours,
                theirs: self.genesis.fingerprint.clone(),
            });
        }
        Ok(g)
    }

    /// The stream's last sequence number now.
    ///
    /// # Errors
    /// [`ClusterError::JetStream`].
    pub async fn last_seq(&mut self) -> Result<u64, ClusterError> {
        Ok(self
            .stream
            .info()
            .await
            .map_err(|e| js_err("reading the stream's state")(&e))?
            .state
            .last_sequence)
    }

    /// [`WorldStream::last_seq`], tried again for up to [`PATIENCE`].
    ///
    /// # Errors
    /// [`ClusterError::JetStream`] when the stream did not answer in that time.
    pub async fn last_seq_patiently(&mut self) -> Result<u64, ClusterError> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match self.last_seq().await {
                Ok(s) => return Ok(s),
                Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
                Err(e) => {
                    tracing::warn!("{e}; trying again");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
    }

    /// Hands every message of the stream from its start up to sequence `upto` to `each`
    /// (sequence, subject, payload), in order. A consumer that fails on the way (a cluster
    /// electing new leaders after losing a server) is made again from the next message;
    /// while none can be made, the stream's leader is asked for the messages one by one
    /// ([`WorldStream::message_at`]); an error after [`PATIENCE`] without progress.
    ///
    /// # Errors
    /// `each`'s error; [`ClusterError::JetStream`] when the stream cannot be read for
    /// `PATIENCE`.
    pub(crate) async fn read_upto(
        &self,
        upto: u64,
        mut each: impl FnMut(u64, &str, &[u8]) -> Result<(), ClusterError>,
    ) -> Result<(), ClusterError> {
        let mut next = 1;
        let mut progress = std::time::Instant::now();
        while next <= upto {
            let mut why = match self.messages_from(next).await {
                Ok(mut msgs) => loop {
                    // A message is due (`next` ≤ `upto` ≤ the stream's last): a consumer
                    // that goes quiet (its server died; the client's ordered consumer then
                    // makes itself again, for ever) is given up for the reads below.
                    let m = match tokio::time::timeout(CONSUMER_PATIENCE, msgs.next()).await {
                        Ok(Some(Ok(m))) => m,
                        Ok(Some(Err(e))) => break e.to_string(),
                        Ok(None) => break "the consumer ended".to_string(),
                        Err(_) => {
                            break format!(
                                "the consumer delivered nothing in {} s",
                                CONSUMER_PATIENCE.as_secs()
                            );
                        }
                    };
                    let seq = match m.info() {
                        Ok(i) => i.stream_sequence,
                        Err(e) => break e.to_string(),
                    };
                    if seq < next {
                        continue;
                    }
                    if seq > next {
                        break format!("the consumer skipped from {next} to {seq}");
                    }
                    each(seq, m.subject.as_str(), &m.payload)?;
                    next = seq + 1;
                    progress = std::time::Instant::now();
                    if seq == upto {
                        return Ok(());
                    }
                },
                Err(e) => e.to_string(),
            };
            // No consumer now, or one that failed: the leader answers reads by sequence
            // (for a while: a consumer is much faster, so one is asked for again after).
            let until = tokio::time::Instant::now() + CONSUMER_PATIENCE;
            while next <= upto && tokio::time::Instant::now() < until {
                match self.message_at(next).await {
                    Ok(Some(m)) => {
                        each(m.seq, &m.subject, &m.payload)?;
                        next = m.seq + 1;
                        progress = std::time::Instant::now();
                    }
                    Ok(None) => {
                        why = format!("{why}; the stream holds no message {next}");
                        break;
                    }
                    Err(e) => {
                        why = format!("{why}; reading message {next}: {e}");
                        break;
                    }
                }
            }
            if next > upto {
                return Ok(());
            }
            if progress.elapsed() > PATIENCE {
                return Err(ClusterError::JetStream {
                    what: "reading the stream",
                    why,
                });
            }
            tracing::warn!("reading the stream at {next}: {why}; reading on");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Ok(())
    }

    /// How many copies the stream keeps (what the world's other streams should keep).
    pub(crate) fn replicas(&self) -> usize {
        self.stream.cached_info().config.num_replicas.max(1)
    }

    /// An ordered consumer of every op from stream sequence `start` (at least 1), made
    /// within [`CONSUMER_PATIENCE`].
    ///
    /// # Errors
    /// [`ClusterError::JetStream`]: JetStream refused it or did not make it in time. (A
    /// cluster that lost a server may place the new consumer on the dead one and never
    /// answer; asked again, it may place it elsewhere.)
    pub(crate) async fn messages_from(
        &self,
        start: u64,
    ) -> Result<jetstream::consumer::pull::Ordered, ClusterError> {
        let make = async {
            let consumer = self
                .stream
                .create_consumer(jetstream::consumer::pull::OrderedConfig {
                    filter_subject: self.names.all(),
                    deliver_policy: DeliverPolicy::ByStartSequence {
                        start_sequence: start.max(1),
                    },
                    ..Default::default()
                })
                .await
                .map_err(|e| js_err("creating a consumer")(&e))?;
            consumer
                .messages()
                .await
                .map_err(|e| js_err("reading the stream")(&e))
        };
        tokio::time::timeout(CONSUMER_PATIENCE, make)
            .await
            .unwrap_or_else(|_| {
                Err(ClusterError::JetStream {
                    what: "creating a consumer",
                    why: format!("no answer in {} s", CONSUMER_PATIENCE.as_secs()),
                })
            })
    }

    /// Message `seq` of the stream, asked of its leader (no consumer needed): `None` when
    /// the stream holds none there yet. Slower than a consumer (one request per message),
    /// so only for while no consumer can be made.
    ///
    /// # Errors
    /// JetStream's, or no answer within [`CONSUMER_PATIENCE`], as text.
    pub(crate) async fn message_at(&self, seq: u64) -> Result<Option<LoggedMessage>, String> {
        match tokio::time::timeout(CONSUMER_PATIENCE, self.stream.get_raw_message(seq)).await {
            Err(_) => Err(format!("no answer in {} s", CONSUMER_PATIENCE.as_secs())),
            Ok(Ok(m)) => Ok(Some(LoggedMessage {
                seq: m.sequence,
                subject: m.subject.to_string(),
                payload: m.payload,
            })),
            Ok(Err(e)) if e.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(None),
            Ok(Err(e)) => Err(e.to_string()),
        }
    }
}

/// A message of the world's stream read by its sequence ([`WorldStream::message_at`]).
pub(crate) struct LoggedMessage {
    /// Its stream sequence.
    pub seq: u64,
    /// Its subject.
    pub subject: String,
    /// Its payload.
    pub payload: bytes::Bytes,
}

/// What [`export_world`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    /// The stream's last sequence replayed.
    pub stream_seq: u64,
    /// Ops applied (the world file's last sequence number).
    pub ops: u64,
    /// Ops the field refused (as every node refused them).
    pub refused: u64,
    /// Messages skipped (not ops, or kinds nodes do not apply).
    pub skipped: u64,
    /// Outcomes of a block authority that came after another took over, skipped by every
    /// node alike (`cluster/blocks.rs`).
    pub late: u64,
    /// The field hash of the exported world.
    pub field_hash: FieldHash,
    /// Held blocks in it.
    pub blocks: usize,
    /// Pieces in it (fallen rubble, or falling when the export was made).
    pub pieces: usize,
}

/// Replays world `cfg.world_id` (every message up to the stream's last at the start) into
/// a new world file at `out`, by the rule every node applies ([`apply`]), so the file holds
/// the world every node holds at that point: `loam world info` reads it.
///
/// # Errors
/// As [`WorldStream::open`] and [`WorldStream::generator`]; [`ClusterError::Store`] when
/// `out` exists or cannot be written.
pub async fn export_world(
    cfg: &NodeConfig,
    out: &Path,
    generator: &GeneratorFactory,
) -> Result<ExportSummary, ClusterError> {
    let mut world = WorldStream::open(cfg).await?;
    let g = world.generator(generator)?;
    let last = world.last_seq_patiently().await?;
    let gen_ = &world.genesis;
    let mut field = Field::new(gen_.field, Arc::new(g))?;
    let mut store = Store::create(
        out,
        &gen_.generator_json,
        &gen_.field,
        gen_.heightmap_blake3.as_deref(),
    )?;
    let mut journal = Journal::new(History::default(), 0);
    let mut replica = BlockReplica::new();
    let mut summary = ExportSummary {
        stream_seq: 0,
        ops: 0,
        refused: 0,
        skipped: 0,
        late: 0,
        field_hash: field.hash(),
        blocks: 0,
        pieces: 0,
    };
    let mut records = Vec::new();
    // A plain world file: a copy of the world as of the export, not a node's (whose file
    // follows the stream, which this one must not).
    let mut flush = |records: &mut Vec<LogRecord>| {
        let r = store.append_records(records);
        records.clear();
        r
    };
    let meta = world.names.meta();
    world
        .read_upto(last, |seq, subject, payload| {
            summary.stream_seq = seq;
            if subject == meta {
                return Ok(());
            }
            match apply(&mut journal, &mut field, payload) {
                Applied::Accepted { entry, .. } => {
                    summary.ops += 1;
                    records.push(LogRecord::Terrain(entry));
                }
                Applied::Cut { removed, lump } => {
                    replica.request_lump(seq, lump);
                    for (entry, _) in removed {
                        summary.ops += 1;
                        records.push(LogRecord::Terrain(entry));
                    }
                }
                Applied::Blocks(op) => match replica.apply(seq, &op) {
                    BlockApplied::Outcome {
                        outcome:
                            Outcome {
                                verdict: Verdict::Accepted(op),
                                ..
                            },
                        ..
                    } => {
                        summary.ops += 1;
                        // Step 0, as nodes log them (`cluster/blocks.rs`); the bake at the
                        // end covers them.
                        records.push(LogRecord::Block(BlockLogEntry {
                            seq: journal.reserve_seq(),
                            step: 0,
                            op,
                        }));
                    }
                    BlockApplied::Skipped(why) => {
                        tracing::warn!(stream_seq = seq, "skipped: {why}");
                        summary.skipped += 1;
                    }
                    // A late authority's outcomes: every node skips them too.
                    BlockApplied::Late { .. } => summary.late += 1,
                    _ => {}
                },
                Applied::Refused { .. } => summary.refused += 1,
                Applied::Skipped { why } => {
                    tracing::warn!(stream_seq = seq, "skipped: {why}");
                    summary.skipped += 1;
                }
            }
            if records.len() >= 4096 {
                flush(&mut records)?;
            }
            Ok(())
        })
        .await?;
    flush(&mut records)?;
    // The blocks as records, not ops: the file opens with the replica every node shows
    // (its block ops are logged for their numbers; the bake covers them).
    if journal.last_seq() > 0 {
        store.bake_with_blocks(
            &field,
            journal.history(),
            journal.last_seq(),
            0,
            &replica.save().encode(),
        )?;
    }
    summary.field_hash = field.hash();
    summary.blocks = replica.world.store().len();
    summary.pieces = replica.world.pieces().count();
    Ok(summary)
}
