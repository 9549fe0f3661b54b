//! One WebSocket connection: the handshake, then a reader (limits, decoding, commands to the
//! ordering thread) and a writer (the client's outbox to the socket, `send.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket, close_code};
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use loam_field::LogEntry;
use tokio::sync::{mpsc, oneshot, watch};

use super::Shared;
use super::frames::Frame;
use super::order::Command;
use super::regions::{resume_key, same_key};
use crate::protocol::{
    ClientMessage, Hello, PROTOCOL_VERSION, Refusal, RefusalCode, ServerMessage, Viewer,
    probe_hello_version,
};
use loam_session::Bucket;

/// Frames the writer sends in one go before flushing.
pub(super) const WRITE_BATCH: usize = 256;
/// Bytes of a hello's name that are kept.
const MAX_NAME: usize = 64;
/// Largest region (bricks) a resuming client may claim.
const MAX_RESUME_BRICKS: u64 = 1 << 24;

/// The ordering thread's way to a connection: its outbox, and the switch that closes it
/// with a reason.
#[derive(Clone)]
pub(crate) struct PeerLink {
    pub tx: mpsc::Sender<Frame>,
    /// Bytes in `tx` not yet taken by the connection's writer ([`Frame::len`]: a catch-up
    /// not yet encoded counts what it holds).
    pub queued: Arc<AtomicUsize>,
    kill: Switch,
}

impl PeerLink {
    /// Closes the connection: the client gets a `Disconnect` with `reason` (the first reason
    /// given wins), then the close frame.
    pub fn kill(&self, reason: impl Into<String>) {
        self.kill.kill(reason);
    }
}

/// The switch that closes a connection with a reason: the ordering thread's (through
/// [`PeerLink`]), the reader's and the writer's; the first reason given wins.
#[derive(Clone)]
pub(super) struct Switch(pub(super) Arc<watch::Sender<Option<String>>>);

impl Switch {
    pub(super) fn kill(&self, reason: impl Into<String>) {
        let reason = reason.into();
        self.0.send_if_modified(|r| {
            if r.is_none() {
                *r = Some(reason);
                true
            } else {
                false
            }
        });
    }
}

/// Resolves once the connection is to close (the guard `wait_for` returns is not `Send`).
pub(super) async fn killed(kill: &mut watch::Receiver<Option<String>>) {
    let _ = kill.wait_for(|r| r.is_some()).await;
}

/// Counts a connected client while alive.
struct Slot(Arc<Shared>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

type Sink = SplitSink<WebSocket, Message>;
type Stream = SplitStream<WebSocket>;

fn refusal(code: RefusalCode, reason: impl Into<String>) -> Refusal {
    Refusal {
        code,
        reason: reason.into(),
        server_protocol: PROTOCOL_VERSION,
    }
}

fn version_refusal(client: u64) -> Refusal {
    let advice = if client < u64::from(PROTOCOL_VERSION) {
        "update the client"
    } else {
        "update the server"
    };
    refusal(
        RefusalCode::ProtocolVersion,
        format!(
            "the client speaks protocol version {client}, this server speaks version \
             {PROTOCOL_VERSION}: {advice}"
        ),
    )
}

pub(super) fn close_frame(reason: &str) -> Message {
    let mut end = reason.len().min(120);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Message::Close(Some(CloseFrame {
        code: close_code::POLICY,
        reason: reason[..end].into(),
    }))
}

/// Sends the refusal and a close frame, then lingers (a refused client may still be sending:
/// closing the socket on its unread data would reset the connection and could destroy the
/// client's copy of the refusal).
async fn refuse(sink: &mut Sink, stream: &mut Stream, r: Refusal, peer: SocketAddr) {
    let reason = r.reason.clone();
    if reason == CLOSED_BEFORE_HELLO {
        tracing::debug!(%peer, "a connection closed before its hello");
    } else {
        tracing::warn!(%peer, code = ?r.code, reason = ?reason, "refused a connection");
    }
    let _ = sink
        .send(Message::Binary(ServerMessage::Refused(r).encode().into()))
        .await;
    let _ = sink.send(close_frame(&reason)).await;
    linger(stream).await;
}

/// Whether `a` equals `b`, in time that depends only on their lengths.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Checks a viewer: finite numbers, a radius in `[0, max]`.
pub(crate) fn check_viewer(v: &Viewer, max_radius: f64) -> Result<(), String> {
    if !v.position.iter().all(|c| c.is_finite() && c.abs() < 1e9) {
        return Err(format!("viewer position {:?} is not usable", v.position));
    }
    if !(v.radius >= 0.0 && v.radius <= max_radius) {
        return Err(format!(
            "viewer radius {} m is out of range [0, {}]",
            loam_field::num(&v.radius),
            loam_field::num(&max_radius)
        ));
    }
    Ok(())
}

/// The next binary message, skipping pings; `None` when the connection ends or sends other.
/// The first message of a connection.
enum First {
    Binary(Bytes),
    /// The connection closed (or failed) before sending anything: a client that gave up,
    /// not a bad one.
    Closed,
    /// A text message.
    Text,
    /// A frame the WebSocket layer refused (over the size limit, unmasked, malformed): why.
    Bad(String),
}

/// `Ok` if a receive error is only the peer going away (a reset, a closed socket); else
/// why the frame it sent was refused.
fn only_gone(e: axum::Error) -> Result<(), String> {
    use tokio_tungstenite::tungstenite::Error as WsError;
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    let e = e.into_inner();
    match e.downcast_ref::<WsError>() {
        Some(
            WsError::ConnectionClosed
            | WsError::AlreadyClosed
            | WsError::Io(_)
            | WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake),
        ) => Ok(()),
        _ => Err(e.to_string()),
    }
}

/// Why a connection closed before its hello (logged below warnings: nothing was refused).
const CLOSED_BEFORE_HELLO: &str = "the connection closed before its hello";

/// Pings and pongs a connection may send before its hello.
const CONTROL_BEFORE_HELLO: u32 = 64;

async fn first_message(stream: &mut Stream) -> First {
    let mut control = 0;
    loop {
        match stream.next().await {
            Some(Ok(Message::Binary(b))) => return First::Binary(b),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {
                control += 1;
                if control > CONTROL_BEFORE_HELLO {
                    return First::Bad(format!(
                        "more than {CONTROL_BEFORE_HELLO} pings or pongs before the hello"
                    ));
                }
            }
            Some(Ok(Message::Text(_))) => return First::Text,
            Some(Err(e)) => {
                return only_gone(e).map_or_else(First::Bad, |()| First::Closed);
            }
            None | Some(Ok(Message::Close(_))) => return First::Closed,
        }
    }
}

async fn handshake(stream: &mut Stream, shared: &Shared) -> Result<Hello, Refusal> {
    let limits = &shared.limits;
    let max = limits.max_message_bytes;
    let first = tokio::time::timeout(limits.hello_timeout, first_message(stream))
        .await
        .map_err(|_| {
            refusal(
                RefusalCode::BadHello,
                format!("no hello within {:?}", limits.hello_timeout),
            )
        })?;
    let first = match first {
        First::Binary(b) => b,
        First::Closed => return Err(refusal(RefusalCode::BadHello, CLOSED_BEFORE_HELLO)),
        First::Text => return Err(refusal(RefusalCode::BadHello, "no binary hello")),
        First::Bad(why) => {
            return Err(refusal(
                RefusalCode::BadHello,
                format!("bad first message: {why}"),
            ));
        }
    };
    let mut hello = match ClientMessage::decode(&first, max) {
        Ok(ClientMessage::Hello(h)) => h,
        Ok(_) => {
            return Err(refusal(
                RefusalCode::BadHello,
                "the first message must be a hello",
            ));
        }
        Err(e) => {
            return Err(match probe_hello_version(&first, max) {
                Some(v) if v != u64::from(PROTOCOL_VERSION) => version_refusal(v),
                _ => refusal(RefusalCode::BadHello, format!("bad hello: {e}")),
            });
        }
    };
    if hello.protocol != PROTOCOL_VERSION {
        return Err(version_refusal(u64::from(hello.protocol)));
    }
    if let Some(token) = &shared.token
        && !hello.token.as_deref().is_some_and(|t| same_token(t, token))
    {
        return Err(refusal(
            RefusalCode::Unauthorized,
            "this server needs a valid token",
        ));
    }
    check_viewer(&hello.viewer, limits.max_view_radius_m)
        .map_err(|e| refusal(RefusalCode::BadHello, e))?;
    if let Some(r) = &hello.resume {
        if !r.region.is_valid() {
            return Err(refusal(
                RefusalCode::BadHello,
                "the resume region is not a valid box",
            ));
        }
        if r.region.volume() > MAX_RESUME_BRICKS {
            return Err(refusal(
                RefusalCode::BadHello,
                format!(
                    "the resume region is too large: {} bricks, at most {MAX_RESUME_BRICKS}",
                    r.region.volume()
                ),
            ));
        }
    }
    if hello.name.trim().is_empty() {
        // A player shown as nothing (`loam edit --name ''` is refused the same way).
        return Err(refusal(RefusalCode::BadHello, "the player's name is empty"));
    }
    let mut end = hello.name.len().min(MAX_NAME);
    while !hello.name.is_char_boundary(end) {
        end -= 1;
    }
    hello.name.truncate(end);
    Ok(hello)
}

/// Serves one upgraded connection until it closes.
pub(crate) async fn run(socket: WebSocket, shared: Arc<Shared>, peer: SocketAddr) {
    let (mut sink, mut stream) = socket.split();
    let hello = match handshake(&mut stream, &shared).await {
        Ok(h) => h,
        Err(r) => return refuse(&mut sink, &mut stream, r, peer).await,
    };
    let before = shared.active.fetch_add(1, Ordering::SeqCst);
    let slot = Slot(shared.clone());
    // A client resuming with its key replaces its own connection, which may still hold a
    // slot (a link that died without a close is noticed only by TCP's keepalive), so it is
    // let in when the server is full, to replace that connection (the ordering thread
    // refuses it if the client has none: a key alone holds no slot).
    let own_resume = hello
        .resume
        .as_ref()
        .is_some_and(|r| same_key(r.key, resume_key(&shared.resume_secret, r.client_id)));
    let full = before >= shared.limits.max_clients;
    let why = format!(
        "the server has its maximum of clients ({})",
        shared.limits.max_clients
    );
    if full && !own_resume {
        // Not held while the refused connection lingers.
        drop(slot);
        return refuse(
            &mut sink,
            &mut stream,
            refusal(RefusalCode::ServerFull, why),
            peer,
        )
        .await;
    }
    let over_limit = full.then_some(why);
    let conn = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = mpsc::channel(shared.limits.outbox_messages);
    let (kill_tx, kill_rx) = watch::channel(None);
    let link = PeerLink {
        tx,
        queued: Arc::new(AtomicUsize::new(0)),
        kill: Switch(Arc::new(kill_tx)),
    };
    let name = hello.name.clone();
    let (reply, client) = oneshot::channel();
    let join = Command::Join {
        conn,
        peer,
        hello,
        link: link.clone(),
        over_limit,
        reply,
    };
    if shared.commands.send(join).await.is_err() {
        drop(slot);
        let r = refusal(RefusalCode::ServerFull, "the server is stopping");
        return refuse(&mut sink, &mut stream, r, peer).await;
    }
    let Ok(client) = client.await else {
        // The ordering thread gave the join up (it says why: its first frames did not fit
        // the outbox, or it resumed past the limit with nothing to replace), or stopped.
        let why = kill_rx.borrow().clone();
        let why = why.unwrap_or_else(|| "the server is stopping".into());
        drop(slot);
        return refuse(
            &mut sink,
            &mut stream,
            refusal(RefusalCode::ServerFull, why),
            peer,
        )
        .await;
    };
    let mut writer = tokio::spawn(super::send::write_loop(
        sink,
        rx,
        link.queued.clone(),
        (link.kill.clone(), kill_rx.clone()),
        shared.encodes.clone(),
    ));
    read_loop(&mut stream, &shared, conn, client, &link, kill_rx.clone()).await;
    let _ = shared.commands.send(Command::Leave { conn, client }).await;
    // The client is gone from the order once its leave is taken: the slot is free for the
    // next client (or this one reconnecting) now, not after the writer's goodbye and the
    // linger below, up to 6 s later.
    drop(slot);
    // The client's data in the reason (a decode error's text) is escaped by `?`.
    let why = kill_rx.borrow().clone();
    match why {
        Some(why) => tracing::info!(client, name = ?name, %peer, reason = ?why, "disconnected"),
        None => tracing::info!(client, name = ?name, %peer, "left"),
    }
    link.kill("connection closed");
    if tokio::time::timeout(Duration::from_secs(5), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
    linger(&mut stream).await;
}

/// How long a closing connection still reads what its client sends.
const LINGER: Duration = Duration::from_secs(1);

/// Reads and drops what the client still sends, up to its close frame, the end of the
/// stream or [`LINGER`]: a socket closed with unread data is answered by the kernel with a
/// reset, and a reset can destroy the client's unread copy of the `Disconnect` (a client
/// dropped for flooding would see "connection reset" instead of the reason).
async fn linger(stream: &mut (impl StreamExt<Item = Result<Message, axum::Error>> + Unpin)) {
    let _ = tokio::time::timeout(LINGER, async {
        while let Some(Ok(m)) = stream.next().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

async fn read_loop(
    stream: &mut Stream,
    shared: &Shared,
    conn: u64,
    client: u64,
    link: &PeerLink,
    mut kill: watch::Receiver<Option<String>>,
) {
    let limits = &shared.limits;
    let mut bucket = KeptBucket::take(shared, client);

    loop {
        let msg = tokio::select! {
            _ = killed(&mut kill) => return,
            m = stream.next() => m,
        };
        let msg = match msg {
            None | Some(Ok(Message::Close(_))) => return,
            Some(Err(e)) => return link.kill(format!("receive failed: {e}")),
            Some(Ok(m)) => m,
        };
        // Every message counts, pings and pongs too: each costs the server a read, and a
        // ping a pong.
        let now = Instant::now();
        if !bucket.take_one(now) {
            return link.kill(format!(
                "rate limit: more than {} messages/s (burst {})",
                limits.ops_per_second, limits.op_burst
            ));
        }
        let bytes = match msg {
            Message::Binary(b) => b,
            Message::Text(_) => return link.kill("text messages are not part of the protocol"),
            _ => continue,
        };
        let cmd = match ClientMessage::decode(&bytes, limits.max_message_bytes) {
            Err(e) => return link.kill(e.to_string()),
            Ok(ClientMessage::Hello(_)) => return link.kill("a second hello"),
            Ok(ClientMessage::Op { op_id, entry }) => Command::Op {
                client,
                op_id,
                entry: LogEntry::decode(&entry).map_err(|e| e.to_string()),
                at: now,
            },
            Ok(ClientMessage::BlockOp { op_id, op }) => Command::BlockOp {
                client,
                op_id,
                op,
                at: now,
            },
            Ok(ClientMessage::Viewer(viewer)) => {
                if let Err(e) = check_viewer(&viewer, limits.max_view_radius_m) {
                    return link.kill(e);
                }
                Command::Viewer {
                    conn,
                    client,
                    viewer,
                }
            }
            Ok(ClientMessage::Presence(report)) => {
                if let Err(e) = report.check() {
                    return link.kill(e.to_string());
                }
                Command::Presence {
                    conn,
                    client,
                    report,
                }
            }
            Ok(ClientMessage::Hash { request, region }) => {
                if region.is_some_and(|r| !r.is_valid()) {
                    return link.kill("hash region is not a valid box");
                }
                Command::HashTo {
                    client,
                    request,
                    region,
                }
            }
        };
        if shared.commands.send(cmd).await.is_err() {
            return link.kill("the server is stopping");
        }
    }
}

/// A client's message bucket for one connection: the one its last connection left (a
/// resumed client), else full; put back when the connection ends, whichever way.
struct KeptBucket<'a> {
    shared: &'a Shared,
    client: u64,
    bucket: Bucket,
}

impl<'a> KeptBucket<'a> {
    fn take(shared: &'a Shared, client: u64) -> Self {
        let kept = shared
            .message_buckets
            .lock()
            .ok()
            .and_then(|mut m| m.remove(&client));
        let limits = &shared.limits;
        let bucket = kept.unwrap_or_else(|| {
            Bucket::full(limits.ops_per_second, limits.op_burst, Instant::now())
        });
        Self {
            shared,
            client,
            bucket,
        }
    }

    fn take_one(&mut self, now: Instant) -> bool {
        self.bucket.take(now)
    }
}

impl Drop for KeptBucket<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.shared.message_buckets.lock() {
            while m.len() >= crate::KEPT_BUCKETS {
                m.pop_first();
            }
            m.insert(self.client, self.bucket.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Refusals of a viewer name the bad number readably, however large.
    #[test]
    fn viewer_refusals_name_the_number() {
        let v = |position: [f64; 3], radius: f64| Viewer { position, radius };
        assert_eq!(check_viewer(&v([1.0, 2.0, 3.0], 64.0), 256.0), Ok(()));
        assert_eq!(
            check_viewer(&v([0.0; 3], 1e300), 256.0),
            Err("viewer radius 1e300 m is out of range [0, 256]".to_string())
        );
        assert_eq!(
            check_viewer(&v([0.0; 3], -0.5), 256.0),
            Err("viewer radius -0.5 m is out of range [0, 256]".to_string())
        );
        assert_eq!(
            check_viewer(&v([0.0; 3], f64::NAN), 256.0),
            Err("viewer radius NaN m is out of range [0, 256]".to_string())
        );
        assert_eq!(
            check_viewer(&v([1e300, 0.0, 0.0], 8.0), 256.0),
            Err("viewer position [1e300, 0.0, 0.0] is not usable".to_string())
        );
    }
}
