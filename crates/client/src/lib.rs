//! # loam-client
//!
//! Loam's multiplayer client: one WebSocket to a Loam server (`loam-server`), speaking
//! [`protocol`] (the crate `loam-protocol`).
//!
//! - [`Client`]: connects, takes a snapshot of its region, applies its own ops at once and
//!   re-applies them over the server's order when it differs; reconnects resuming from its
//!   last sequence number.
//! - Blocks: block ops go through the server's order and log like terrain ops; the server
//!   decides what falls, breaks and where rubble rests and sends the records; the client
//!   mirrors them ([`Client::blocks`], [`Client::send_block_op`]) and its block world
//!   hashes like the server's ([`protocol::block_hash`]) over its region.
//! - Presence: the client reports where it is and where its tool aims
//!   ([`Client::set_presence`]) and hears the others ([`Client::players`]).
//! - Undo over the network: [`Client::undo`] / [`Client::redo`] take back and bring back
//!   the client's own strokes through the server's order and history.
//!
//! ```no_run
//! # async fn run() -> Result<(), loam_client::ClientError> {
//! use std::sync::Arc;
//! use loam_client::{Client, ClientConfig, Viewer};
//! use loam_field::{CaveSettings, Generator, NoiseTerrainSettings};
//! use loam_protocol::GeneratorFactory;
//!
//! let generator: GeneratorFactory = Arc::new(|_json: &str| {
//!     Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
//!         .map_err(|e| e.to_string())
//! });
//! let viewer = Viewer { position: [0.0, 16.0, 0.0], radius: 64.0 };
//! let config = ClientConfig::new("ws://127.0.0.1:7878/ws", viewer, generator);
//! let mut client = Client::connect(config).await?;
//! println!("field-hash: {}", client.field().hash());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod error;
mod state;
mod strokes;
mod transport;

pub use error::ClientError;
pub use loam_protocol as protocol;
pub use loam_protocol::{Aim, Player, PresenceReport, Viewer};
pub use state::{ClientEvent, SyncReport};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use loam_blocks::{BlockDelta, BlockOp, BlockWorld};
use loam_field::{BrickKey, EditOp, Field, Generator};
use loam_physics::PhysicsWorld;
use tokio_tungstenite::tungstenite::Message;

use crate::protocol::{BrickBox, ClientMessage, DEFAULT_MAX_MESSAGE_BYTES, Resume, ServerMessage};
use loam_protocol::GeneratorFactory;
use loam_protocol::interest::generator_fingerprint;
use state::State;
use transport::{Incoming, Ws, next_incoming, open, ws_error};

/// How to connect ([`Client::connect`]).
#[derive(Clone)]
pub struct ClientConfig {
    /// The server's URL, `ws://HOST:PORT/ws` (a URL without a path, `ws://HOST:PORT`, gets
    /// `/ws`).
    pub url: String,
    /// A display name.
    pub name: String,
    /// The server's token, if it asks for one.
    pub token: Option<String>,
    /// Where the client looks (updated by [`Client::set_viewer`]).
    pub viewer: Viewer,
    /// Builds the world's generator from the JSON the server sends.
    pub generator: GeneratorFactory,
    /// Largest message accepted from the server, bytes. Default 1 MiB (the server's default).
    pub max_message_bytes: usize,
    /// How long connecting and the handshake may take. Default 30 s.
    pub timeout: Duration,
}

impl ClientConfig {
    /// Defaults for `url`, `viewer` and `generator`.
    pub fn new(url: impl Into<String>, viewer: Viewer, generator: GeneratorFactory) -> Self {
        Self {
            url: url.into(),
            name: "loam".into(),
            token: None,
            viewer,
            generator,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            timeout: Duration::from_secs(30),
        }
    }
}

/// A connected client. Call [`Client::next_event`] in a loop (or [`Client::sync`]) to take in
/// the server's messages; [`Client::send_op`] to edit.
pub struct Client {
    config: ClientConfig,
    ws: Option<Ws>,
    state: State,
    next_request: u64,
    /// The last presence report asked for, sent again after a reconnect (the server
    /// forgets a player's aim when their connection goes).
    presence: Option<PresenceReport>,
    /// The ping on its way: its payload and when it was sent.
    ping: Option<(u64, Instant)>,
    next_ping: u64,
    rtt: Option<Duration>,
}

impl Client {
    /// Connects to `config.url`: hello, welcome, then the snapshot of the viewer's region.
    /// Returns once the region is held.
    ///
    /// # Errors
    /// [`ClientError::Refused`] (another protocol version, a bad token, a full server),
    /// [`ClientError::Generator`] if the generator cannot be built or differs from the
    /// server's, [`ClientError::Timeout`], transport and protocol errors.
    pub async fn connect(config: ClientConfig) -> Result<Self, ClientError> {
        let (ws, welcome) = open(&config, None).await?;
        let generator =
            (config.generator)(&welcome.world.generator_json).map_err(ClientError::Generator)?;
        if generator_fingerprint(&generator, &welcome.world.field)
            != welcome.world.generator_fingerprint
        {
            return Err(ClientError::Generator(
                "this client's generator differs from the server's".into(),
            ));
        }
        let state = State::new(&welcome, Arc::new(generator))?;
        let mut client = Self {
            config,
            ws: Some(ws),
            state,
            next_request: 1,
            presence: None,
            ping: None,
            next_ping: 1,
            rtt: None,
        };
        client.finish_handshake().await?;
        Ok(client)
    }

    async fn finish_handshake(&mut self) -> Result<(), ClientError> {
        let timeout = self.config.timeout;
        tokio::time::timeout(timeout, async {
            while !self.state.caught_up {
                let msg = self.recv().await?;
                self.take(msg)?;
            }
            Ok(())
        })
        .await
        .map_err(|_| ClientError::Timeout("the snapshot"))?
    }

    /// The connection is gone: what the client knew of the others no longer holds.
    fn lose_connection(&mut self) {
        self.ws = None;
        self.ping = None;
        self.state.players.clear();
    }

    async fn recv(&mut self) -> Result<ServerMessage, ClientError> {
        loop {
            if let Incoming::Message(m) = self.recv_incoming().await? {
                return Ok(m);
            }
        }
    }

    async fn recv_incoming(&mut self) -> Result<Incoming, ClientError> {
        let ws = self.ws.as_mut().ok_or(ClientError::NotConnected)?;
        let r = next_incoming(ws, self.config.max_message_bytes).await;
        if r.is_err() {
            self.lose_connection();
        }
        r
    }

    fn take(&mut self, msg: ServerMessage) -> Result<(), ClientError> {
        let r = self.state.handle(msg);
        if r.is_err() {
            self.lose_connection();
        }
        r
    }

    async fn send(&mut self, bytes: Vec<u8>) -> Result<(), ClientError> {
        self.send_frame(Message::Binary(bytes.into())).await
    }

    async fn send_frame(&mut self, frame: Message) -> Result<(), ClientError> {
        let ws = self.ws.as_mut().ok_or(ClientError::NotConnected)?;
        if let Err(e) = ws.send(frame).await {
            self.lose_connection();
            return Err(ws_error(e));
        }
        Ok(())
    }

    /// Sends a WebSocket ping (RFC 6455 §5.5.2; the server's WebSocket layer answers it):
    /// its pong comes back from [`Client::next_event`] as [`ClientEvent::Pong`] with the
    /// round-trip time, which [`Client::rtt`] then keeps. A ping sent while another is on its
    /// way replaces it (the older pong is ignored).
    ///
    /// # Errors
    /// [`ClientError::NotConnected`] and transport errors.
    pub async fn ping(&mut self) -> Result<(), ClientError> {
        let payload = self.next_ping;
        self.next_ping += 1;
        let frame = Message::Ping(payload.to_le_bytes().to_vec().into());
        self.send_frame(frame).await?;
        self.ping = Some((payload, Instant::now()));
        Ok(())
    }

    /// The round-trip time of the last [`Client::ping`] answered on this connection or an
    /// earlier one; `None` before the first.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// The next event already queued (a reconnect queues [`ClientEvent::Resumed`] and
    /// [`ClientEvent::Lost`]), without waiting for the server; `None` if there is none.
    pub fn queued_event(&mut self) -> Option<ClientEvent> {
        self.state.events.pop_front()
    }

    /// The next event. Cancel-safe: a call dropped before it returns loses nothing.
    ///
    /// # Errors
    /// [`ClientError::Disconnected`] (with the server's reason), [`ClientError::NotConnected`],
    /// transport and protocol errors; the client is then disconnected
    /// ([`Client::reconnect`]).
    pub async fn next_event(&mut self) -> Result<ClientEvent, ClientError> {
        loop {
            if let Some(e) = self.state.events.pop_front() {
                return Ok(e);
            }
            match self.recv_incoming().await? {
                Incoming::Message(msg) => self.take(msg)?,
                Incoming::Pong(p) => {
                    if let Some((sent, at)) = self.ping
                        && sent == p
                    {
                        self.ping = None;
                        let rtt = at.elapsed();
                        self.rtt = Some(rtt);
                        return Ok(ClientEvent::Pong { rtt });
                    }
                }
            }
        }
    }

    /// Applies `op` to the predicted field at once and sends it as part of `stroke` (the
    /// client's own stroke ids; a new stroke needs a new id). Undo and redo name the
    /// server's stroke id ([`ClientEvent::Op::stroke`]) and are not predicted. Returns the
    /// op's id.
    ///
    /// # Errors
    /// [`ClientError::Edit`] if the field rejects the op (nothing is sent);
    /// [`ClientError::NotConnected`] and transport errors (the op leaves the prediction).
    pub async fn send_op(&mut self, stroke: u64, op: EditOp) -> Result<u64, ClientError> {
        if self.ws.is_none() {
            return Err(ClientError::NotConnected);
        }
        let (op_id, message) = self.state.predict(stroke, op)?;
        if let Err(e) = self.send(message).await {
            // Not sent as far as we know: not predicted either. (Had it reached the server
            // after all, it comes back as an op of ours that is no longer pending.)
            self.state.unpredict(op_id);
            return Err(e);
        }
        Ok(op_id)
    }

    /// [`Client::send_op`] for a client that keeps its player's edits while the connection
    /// is down (an editor): disconnected, the op is predicted and queued, and the next
    /// [`Client::reconnect`] sends it with the ops the server had not taken. An op whose send
    /// fails stays predicted too; the reconnect tells its fate (taken, sent again, or
    /// [`ClientEvent::Lost`] if the server restarted without knowing).
    ///
    /// # Errors
    /// [`ClientError::Edit`] if the field rejects the op (nothing is queued).
    pub async fn queue_op(&mut self, stroke: u64, op: EditOp) -> Result<u64, ClientError> {
        let connected = self.ws.is_some();
        let (op_id, message) = self.state.predict(stroke, op)?;
        if connected {
            // A failed send drops the connection; the op may have reached the server, so it
            // stays pending as sent and the reconnect tells its fate.
            let _ = self.send(message).await;
        } else {
            self.state.unsent(op_id);
        }
        Ok(op_id)
    }

    /// [`Client::send_block_op`] for a client that keeps its player's edits while the
    /// connection is down (an editor): disconnected, the op is queued (not predicted: the
    /// server decides what it makes fall), and the next [`Client::reconnect`] sends it in op
    /// id order with the terrain ops. An op whose send fails stays pending; the reconnect
    /// tells its fate (taken, sent again, or [`ClientEvent::Lost`] if the server restarted
    /// without knowing). Returns the op's id.
    pub async fn queue_block_op(&mut self, op: &BlockOp) -> u64 {
        let connected = self.ws.is_some();
        let (op_id, message) = self.state.block_op(op);
        if connected {
            // A failed send drops the connection; the op stays pending as sent.
            let _ = self.send(message).await;
        } else if let Some(p) = self.state.replica.pending.get_mut(&op_id) {
            p.sent = false;
        }
        op_id
    }

    /// Sends a block op (not predicted: the server decides what it makes fall, and its
    /// records come back in its order as [`ClientEvent::BlockOp`], or a
    /// [`ClientEvent::Refused`] naming the op id). Returns the op's id (one sequence with
    /// terrain ops). A lump op is the server's to make and is refused.
    ///
    /// # Errors
    /// [`ClientError::NotConnected`] and transport errors (the op is then forgotten).
    pub async fn send_block_op(&mut self, op: &BlockOp) -> Result<u64, ClientError> {
        if self.ws.is_none() {
            return Err(ClientError::NotConnected);
        }
        let (op_id, message) = self.state.block_op(op);
        if let Err(e) = self.send(message).await {
            self.state.replica.pending.remove(&op_id);
            return Err(e);
        }
        Ok(op_id)
    }

    /// The server's blocks in this client's region, as of [`Client::last_seq`]: held blocks
    /// and resting rubble equal the server's bit for bit; falling pieces are where the
    /// server made them or where [`Client::follow_blocks`] has played them to.
    pub fn blocks(&self) -> &BlockWorld {
        &self.state.replica.world
    }

    /// The physics world of [`Client::blocks`]: the pieces' bodies and the held blocks'
    /// colliders. It has no terrain colliders: add them ([`PhysicsWorld::set_chunk`]) for
    /// falls that land where the server's do.
    pub fn block_physics(&mut self) -> &mut PhysicsWorld {
        &mut self.state.replica.physics
    }

    /// Plays the falls back for `dt_seconds` ([`BlockWorld::follow`]): moves the falling
    /// pieces in the client's physics world, decides nothing.
    ///
    /// # Errors
    /// [`ClientError::Blocks`] for a bad `dt_seconds`.
    pub fn follow_blocks(&mut self, dt_seconds: f32) -> Result<(), ClientError> {
        let s = &mut self.state;
        s.replica.world.follow(&mut s.replica.physics, dt_seconds)?;
        Ok(())
    }

    /// Starts (or stops) keeping every block delta this client applies, for a mirror of
    /// [`Client::blocks`] in another physics world (the editor's, which has terrain
    /// colliders): a fresh [`BlockWorld`] that applies [`Client::take_block_deltas`] in
    /// order ([`BlockWorld::apply_delta`]) holds the same held blocks and pieces, bit for
    /// bit, and plays falls back with [`BlockWorld::follow`]. Starting queues the blocks
    /// held now as the first delta.
    pub fn mirror_blocks(&mut self, on: bool) {
        self.state.mirror_blocks(on);
    }

    /// The block deltas applied since the last call, in order (empty unless
    /// [`Client::mirror_blocks`] is on).
    pub fn take_block_deltas(&mut self) -> Vec<BlockDelta> {
        self.state
            .replica
            .mirror
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The client's block hash over `region` (every block it holds when `None`), as
    /// [`crate::protocol::block_hash`].
    pub fn block_hash(&self, region: Option<BrickBox>) -> [u8; 32] {
        self.state.block_hash(region)
    }

    /// Own block ops sent and not yet confirmed or refused.
    pub fn pending_block_ops(&self) -> usize {
        self.state.replica.pending.len()
    }

    /// Moves the viewer; the server sends the bricks of regions the client moves into. The
    /// viewer is kept even when it cannot be sent: the next [`Client::reconnect`] asks for
    /// its region.
    ///
    /// # Errors
    /// [`ClientError::NotConnected`] and transport errors.
    pub async fn set_viewer(&mut self, viewer: Viewer) -> Result<(), ClientError> {
        self.config.viewer = viewer;
        self.send(ClientMessage::Viewer(viewer).encode()).await
    }

    /// Tells the server where this player is and where their tool aims; the other clients
    /// see it in their [`Client::players`] within about 100 ms. The server keeps only the
    /// latest report, so sending one per frame is wasteful but harmless (it counts against
    /// the server's message rate limit). The report is kept even when it cannot be sent
    /// (disconnected), and [`Client::reconnect`] sends it again: the server forgets a
    /// player's aim when their connection goes.
    ///
    /// # Errors
    /// [`ClientError::Aim`] for non-finite or out-of-range numbers or a too long tool name
    /// (nothing is sent: the server would disconnect the client);
    /// [`ClientError::NotConnected`] and transport errors.
    pub async fn set_presence(&mut self, report: PresenceReport) -> Result<(), ClientError> {
        report.check()?;
        let message = ClientMessage::Presence(report.clone()).encode();
        self.presence = Some(report);
        self.send(message).await
    }

    /// The other players the server has told of, by id (never this client): name, position
    /// and aim as last reported. Emptied when the connection drops, until the server lists
    /// them again after a reconnect.
    pub fn players(&self) -> &BTreeMap<u64, Player> {
        &self.state.players
    }

    /// Undoes this client's newest stroke that the server has confirmed (and not undone):
    /// sends an undo of each server stroke it became (see [`ClientEvent::Op::stroke`]),
    /// newest first. Undos are not predicted: the field changes when they come back in the
    /// server's order, with the bricks they restored ([`ServerMessage::Patch`]). Returns
    /// the ops' ids, or `None` when there is nothing to undo. The server's undo restores
    /// the stroke's samples even where another player changed them later. If the server
    /// refuses the undo (another client undid that stroke first, or its history dropped
    /// it), the stroke counts as done again.
    ///
    /// # Errors
    /// [`ClientError::Unsettled`] while own ops are still on their way (undo after they come
    /// back); otherwise as [`Client::send_op`].
    pub async fn undo(&mut self) -> Result<Option<Vec<u64>>, ClientError> {
        self.settled()?;
        let Some(s) = self.state.own.undo() else {
            return Ok(None);
        };
        let mut ids = Vec::with_capacity(s.server.len());
        for &server in s.server.iter().rev() {
            let id = self
                .send_op(s.stroke, EditOp::Undo { stroke: server })
                .await?;
            self.state.reverting.insert(id, (true, s.stroke));
            ids.push(id);
        }
        Ok(Some(ids))
    }

    /// Redoes this client's stroke undone last by [`Client::undo`] (a new stroke since
    /// forgets it): a redo of each of its server strokes, oldest first. Returns the ops'
    /// ids, or `None` when there is nothing to redo.
    ///
    /// # Errors
    /// As [`Client::undo`].
    pub async fn redo(&mut self) -> Result<Option<Vec<u64>>, ClientError> {
        self.settled()?;
        let Some(s) = self.state.own.redo() else {
            return Ok(None);
        };
        let mut ids = Vec::with_capacity(s.server.len());
        for &server in &s.server {
            let id = self
                .send_op(s.stroke, EditOp::Redo { stroke: server })
                .await?;
            self.state.reverting.insert(id, (false, s.stroke));
            ids.push(id);
        }
        Ok(Some(ids))
    }

    /// Own strokes that [`Client::undo`] and [`Client::redo`] can take back and bring back.
    pub fn undo_counts(&self) -> (usize, usize) {
        self.state.own.counts()
    }

    fn settled(&self) -> Result<(), ClientError> {
        match self.state.pending.len() {
            0 => Ok(()),
            ops => Err(ClientError::Unsettled { ops }),
        }
    }

    /// Asks the server for its hash over the client's region (every brick when `whole`) and
    /// returns it with the local hash over the same bricks at the same sequence number,
    /// taking in every message before the answer (events stay queued).
    ///
    /// # Errors
    /// As [`Client::next_event`]; [`ClientError::Timeout`] after the config's timeout.
    pub async fn sync(&mut self, whole: bool) -> Result<SyncReport, ClientError> {
        let request = self.next_request;
        self.next_request += 1;
        let region = if whole { None } else { self.state.region };
        self.send(ClientMessage::Hash { request, region }.encode())
            .await?;
        let timeout = self.config.timeout;
        tokio::time::timeout(timeout, async {
            loop {
                if let Some(r) = self.state.hashes.remove(&request) {
                    return Ok(r);
                }
                let msg = self.recv().await?;
                self.take(msg)?;
            }
        })
        .await
        .map_err(|_| ClientError::Timeout("the hash"))?
    }

    /// Connects again after a drop, resuming from the last sequence number: the server sends
    /// the missed ops of the region (and the bricks the client cannot compute from them)
    /// while it still has them, else a full snapshot. Own ops the server had not taken are
    /// sent again, then the last presence report ([`Client::set_presence`]). Returns whether
    /// it resumed.
    ///
    /// # Errors
    /// As [`Client::connect`]; [`ClientError::AnotherWorld`] if the server now serves another
    /// world, or one older than this client has seen (its last op is before this client's):
    /// reconnecting again will not help.
    pub async fn reconnect(&mut self) -> Result<bool, ClientError> {
        self.lose_connection();
        let resume = self.state.region.map(|region| Resume {
            client_id: self.state.id,
            key: self.state.resume_key,
            last_seq: self.state.last_seq,
            region,
        });
        let (ws, welcome) = open(&self.config, resume).await?;
        if welcome.world != self.state.meta {
            return Err(ClientError::AnotherWorld(
                "the server now serves another world".into(),
            ));
        }
        // A server never loses an op it sent (it stores each before it broadcasts it): one
        // behind this client serves another world made from the same settings, or an older
        // copy of this one.
        if welcome.seq < self.state.last_seq {
            return Err(ClientError::AnotherWorld(format!(
                "the server is at op {}, behind the op {} this client had from it: it serves \
                 another world or an older copy",
                welcome.seq, self.state.last_seq
            )));
        }
        self.state.all_changed();
        let again = self.state.rewelcome(&welcome);
        self.ws = Some(ws);
        self.finish_handshake().await?;
        for m in again {
            self.send(m).await?;
        }
        if let Some(report) = self.presence.clone() {
            self.send(ClientMessage::Presence(report).encode()).await?;
        }
        Ok(welcome.resumed)
    }

    /// Points the next [`Client::reconnect`] at another server: another node of the same
    /// world on NATS JetStream (`loam serve --nats`), where the client keeps its id, its
    /// undo history and its unacknowledged ops, since every node orders the same log.
    pub fn set_url(&mut self, url: impl Into<String>) {
        self.config.url = url.into();
    }

    /// Drops the connection at once, without a close handshake (as a lost network would).
    pub fn drop_connection(&mut self) {
        self.lose_connection();
    }

    /// Whether the client has a connection.
    pub fn is_connected(&self) -> bool {
        self.ws.is_some()
    }

    /// The field as this client sees it: the server's order with its own pending ops on top.
    pub fn field(&mut self) -> &Field {
        self.state.predicted()
    }

    /// The bricks of [`Client::field`] that may differ from the field it returned at the
    /// last call, ascending; `None` when any may (the first call, a reconnect since, or more
    /// than 16 384 bricks named: a client nobody asks collects no more). An
    /// app showing the field takes and remeshes only these (`client.field().patch(keys)`
    /// and loam-world's `World::take_patch`) instead of comparing every brick. Every brick whose
    /// samples differ is in it: the ones the server's ops, patches and catch-ups wrote, and
    /// those this client's predicted ops wrote or stopped writing (confirmed, refused, or
    /// taken back); a brick written back to the same samples may be too.
    pub fn take_changed_bricks(&mut self) -> Option<std::collections::BTreeSet<BrickKey>> {
        self.state.take_changed()
    }

    /// The field in the server's order only, up to [`Client::last_seq`]; equal to the
    /// server's over [`Client::region`].
    pub fn confirmed_field(&self) -> &Field {
        self.state.confirmed()
    }

    /// The world's generator.
    pub fn generator(&self) -> &Generator {
        self.state.confirmed().generator()
    }

    /// The client's id (the author of its ops).
    pub fn id(&self) -> u64 {
        self.state.id
    }

    /// The last sequence number the client is up to date with.
    pub fn last_seq(&self) -> u64 {
        self.state.last_seq
    }

    /// The region (bricks) the client holds exactly.
    pub fn region(&self) -> Option<BrickBox> {
        self.state.region
    }

    /// Own ops sent and not yet confirmed or refused.
    pub fn pending_ops(&self) -> usize {
        self.state.pending.len()
    }

    /// The viewer last set.
    pub fn viewer(&self) -> Viewer {
        self.config.viewer
    }

    /// Closes the connection politely.
    pub async fn close(mut self) {
        if let Some(mut ws) = self.ws.take() {
            let _ = ws.close(None).await;
        }
    }
}
