//! Accepting connections: HTTP/1 with a deadline on each request head, then the WebSocket
//! upgrade (the router's [`super::WS_PATH`]).
//!
//! `axum::serve` sets no timer, so a connection that never sent its request (or sent half a
//! head) was held forever: a fresh-user trial kept 20 such connections open for 75 s and
//! more, none counted against `--max-clients`, which only counts clients after their hello.
//! Here hyper closes a connection whose request head is not in within the deadline (and,
//! between two requests on one connection, whose next head is not); after the upgrade the
//! hello has its own deadline ([`super::Limits::hello_timeout`]).

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::{Extension, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::metered::Metered;

/// Serves `router` on `listener` until the task is dropped; a request head must arrive
/// within `head_timeout` of the connection (or of the previous response). Each connection
/// may send `received.0` bytes a second, `received.1` at once ([`Metered`]).
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    head_timeout: Duration,
    received: (f64, f64),
) {
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
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(head_timeout)
                .serve_connection(
                    TokioIo::new(Metered::new(tcp, received.0, received.1)),
                    service,
                )
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
