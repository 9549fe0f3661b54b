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

/// Serves `router` on `listener` until the task is dropped; a request head must arrive
/// within `head_timeout` of the connection (or of the previous response).
pub(super) async fn serve(listener: TcpListener, router: Router, head_timeout: Duration) {
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
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            if let Err(e) = conn.await {
                tracing::debug!(%peer, "an HTTP connection ended: {e}");
            }
        });
    }
}
