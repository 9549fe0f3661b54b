//! Accepting connections: HTTP/1 with a deadline on each request head, then the WebSocket
//! upgrade (the router's [`super::WS_PATH`]).
//!
//! `axum::serve` sets no timer, so a connection that never sent its request (or sent half a
//! head) was held forever: a fresh-user trial kept 20 such connections open for 75 s and
//! more, none counted against `--max-clients`, which only counts clients after their hello.
//! Here hyper closes a connection whose request head is not in within the deadline (and,
//! between two requests on one connection, whose next head is not); after the upgrade the
//! hello has its own deadline ([`super::Limits::hello_timeout`]). Connections open at once
//! are capped ([`super::Limits::max_waiting_connections`] beyond the clients).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::{Extension, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::metered::Metered;

/// What [`serve`] lets in.
pub(super) struct Admission {
    /// How long a connection may take to send a request head (from its start, or from the
    /// previous response).
    pub head_timeout: Duration,
    /// Bytes a second each connection may send on average, and at once ([`Metered`]).
    pub received: (f64, f64),
    /// Most connections open at once, joined or not; past it a new one is answered 503
    /// and closed.
    pub max_open: usize,
}

/// The answer to a connection over [`Admission::max_open`]: the client's WebSocket
/// handshake fails with the status rather than a bare close.
const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Connections over [`Admission::max_open`] being answered and closed at once; past it
/// one is closed unanswered.
const MAX_CLOSING: usize = 32;

/// How long a refused connection is read from before it is closed.
const CLOSING_LINGER: Duration = Duration::from_secs(1);

/// Answers a connection over the cap 503 and closes it, on a task of its own (at most
/// [`MAX_CLOSING`] at once; past that the socket is closed unanswered): after the answer,
/// what the client sends is read and dropped up to its close or [`CLOSING_LINGER`], as a
/// socket closed with unread data is reset, and a reset can destroy the client's copy of
/// the answer.
fn refuse_busy(mut tcp: tokio::net::TcpStream, closing: &Arc<Semaphore>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(place) = closing.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let _place = place;
        let _ = tokio::time::timeout(CLOSING_LINGER, async {
            tcp.write_all(BUSY).await?;
            tcp.shutdown().await?;
            let mut sink = [0u8; 4096];
            while tcp.read(&mut sink).await? > 0 {}
            std::io::Result::Ok(())
        })
        .await;
    });
}

/// Serves `router` on `listener` until the task is dropped, within `admission`.
pub(super) async fn serve(listener: TcpListener, router: Router, admission: Admission) {
    let Admission {
        head_timeout,
        received,
        max_open,
    } = admission;
    // One permit per open connection, held by its stream (through the upgrade to the end
    // of the WebSocket).
    let open = Arc::new(Semaphore::new(max_open.min(Semaphore::MAX_PERMITS)));
    let closing = Arc::new(Semaphore::new(MAX_CLOSING));
    let mut last_warned: Option<Instant> = None;
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin (as
                // axum::serve does).
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            refuse_busy(tcp, &closing);
            if last_warned.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                last_warned = Some(Instant::now());
                tracing::warn!(%peer, max_open, "refused a connection: too many open");
            }
            continue;
        };
        // Small messages go out at once (no Nagle delay).
        let _ = tcp.set_nodelay(true);
        keep_alive(&tcp);
        // Each connection knows its peer's address (for the log).
        let service = TowerToHyperService::new(
            router
                .clone()
                .layer(Extension(ConnectInfo::<SocketAddr>(peer))),
        );
        tokio::spawn(async move {
            let stream = Metered::new(tcp, received.0, received.1).holding(permit);
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(head_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            if let Err(e) = conn.await {
                tracing::debug!(%peer, "an HTTP connection ended: {e}");
            }
        });
    }
}

/// Silence after which TCP probes an idle connection, the time between probes, and the
/// probes unanswered before it is closed; and how long data sent may stay unacknowledged
/// (`TCP_USER_TIMEOUT`, Linux). A client whose link died without a close (a cable pulled,
/// a laptop asleep) is otherwise held for the kernel's defaults: two hours idle, some 15
/// minutes with data in flight. It holds a slot of [`super::Limits::max_clients`] and its
/// outbox meanwhile. (On Linux 5.11 and later the timeout also closes a connection whose
/// client has not read for that long, its receive window zero: such a client is closed by
/// the kernel without the outbox's "too slow" reason, if the outbox has not dropped it
/// first.)
const KEEPALIVE_IDLE: Duration = Duration::from_secs(20);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_PROBES: u32 = 4;
#[cfg(any(target_os = "linux", target_os = "android"))]
const UNACKED_TIMEOUT: Duration = Duration::from_secs(45);

/// Sets TCP keepalive and the unacknowledged-data timeout on an accepted connection (a
/// failure is logged: the connection works without them).
fn keep_alive(tcp: &tokio::net::TcpStream) {
    let sock = socket2::SockRef::from(tcp);
    let ka = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    if let Err(e) = sock.set_tcp_keepalive(&ka) {
        tracing::debug!("TCP keepalive not set: {e}");
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = sock.set_tcp_user_timeout(Some(UNACKED_TIMEOUT)) {
        tracing::debug!("TCP_USER_TIMEOUT not set: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn accepted_connections_are_probed_when_silent() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (tcp, _) = listener.accept().await.unwrap();
        keep_alive(&tcp);
        let sock = socket2::SockRef::from(&tcp);
        assert!(sock.keepalive().unwrap());
        assert_eq!(sock.tcp_keepalive_time().unwrap(), KEEPALIVE_IDLE);
        assert_eq!(sock.tcp_keepalive_interval().unwrap(), KEEPALIVE_INTERVAL);
        assert_eq!(sock.tcp_keepalive_retries().unwrap(), KEEPALIVE_PROBES);
        assert_eq!(sock.tcp_user_timeout().unwrap(), Some(UNACKED_TIMEOUT));
    }
}
