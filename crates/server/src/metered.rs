//! A byte budget on what a connection receives: [`Metered`] wraps an accepted TCP stream and
//! fails its reads once the client has sent more than [`crate::Limits::received_bytes_per_second`]
//! allows.
//!
//! The message rate limit ([`crate::Limits::ops_per_second`]) counts whole WebSocket
//! messages, which tungstenite assembles out of sight of the server: a fresh-user trial
//! started a fragmented message and sent empty continuation frames forever (247 million in
//! 15 s), which kept a core busy and never made a message to count. Bytes are counted below
//! the WebSocket layer, so every frame, control frames included, pays for itself. A read
//! over the budget fails with [`std::io::ErrorKind::Other`] (once; later reads pass, so the
//! closing connection can drain its socket); the connection's reader then disconnects the
//! client with that reason. Between the burst and the rate, a client may still send up to
//! the rate: at 8 MiB/s some 1.4 million empty frames a second, which tungstenite parses.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use loam_session::Bucket;

/// `inner`, its reads counted against a token bucket of bytes.
pub(super) struct Metered<S> {
    inner: S,
    budget: Bucket,
    rate: f64,
    burst: f64,
    /// Over budget once: the failure was reported, and later reads pass uncounted, so that
    /// the closing connection can still read (and drop) what the client sent, and its
    /// `Disconnect` is not destroyed by a reset (`conn.rs`, `linger`).
    tripped: bool,
    /// The connection's place among the open ones ([`Self::holding`]), given back when the
    /// stream is dropped.
    _place: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl<S> Metered<S> {
    /// `inner` with `rate` bytes a second on average and `burst` at once.
    pub fn new(inner: S, rate: f64, burst: f64) -> Self {
        Self {
            inner,
            budget: Bucket::full(rate, burst, Instant::now()),
            rate,
            burst,
            tripped: false,
            _place: None,
        }
    }

    /// The stream holding `place` (a permit of the server's open connections) for its life.
    pub fn holding(mut self, place: tokio::sync::OwnedSemaphorePermit) -> Self {
        self._place = Some(place);
        self
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if !this.tripped => {
                let n = buf.filled().len() - before;
                let now = Instant::now();
                // Topped up to now first: a read after an idle spell is charged against a
                // full bucket, never more than the burst.
                this.budget.charge_at(n as f64, now);
                if n > 0 && !this.budget.has_some(now) {
                    this.tripped = true;
                    return Poll::Ready(Err(io::Error::other(format!(
                        "more than {:.0} bytes/s received (burst {:.0})",
                        this.rate, this.burst
                    ))));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Reads within the budget pass; the read that takes the balance below zero fails, and
    /// says why.
    #[tokio::test]
    async fn a_read_over_the_budget_fails_with_the_reason() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let mut m = Metered::new(server, 1.0, 1000.0);
        client.write_all(&[7; 600]).await.unwrap();
        let mut buf = vec![0; 4096];
        assert_eq!(m.read(&mut buf).await.unwrap(), 600);
        client.write_all(&[7; 400]).await.unwrap();
        // 1 000 bytes in all: the balance is at zero (plus a little refill), not below.
        assert_eq!(m.read(&mut buf).await.unwrap(), 400);
        client.write_all(&[7; 10]).await.unwrap();
        let e = m.read(&mut buf).await.unwrap_err();
        assert_eq!(e.to_string(), "more than 1 bytes/s received (burst 1000)");
        // Reported once: later reads pass (the closing connection drains what was sent).
        client.write_all(&[7; 3000]).await.unwrap();
        assert_eq!(m.read(&mut buf).await.unwrap(), 3000);
        // Writes are not counted.
        m.write_all(&[1; 5000]).await.unwrap();
    }
}
