//! A connection's writer: the client's outbox to the socket, in batches, catch-ups encoded
//! on the way; a failed send closes the connection with the error.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::ws::Message;
use futures_util::SinkExt;
use tokio::sync::{mpsc, watch};

use super::conn::{Switch, WRITE_BATCH, close_frame, killed};
use super::frames::Frame;
use crate::protocol::ServerMessage;

/// Kills the connection after a failed send, unless the failure is only the connection
/// having closed or the client having gone (a reset, a broken pipe): the reader sees that
/// too and ends it, a client's close counting as leaving.
fn send_failed(switch: &Switch, e: axum::Error) {
    use std::io::ErrorKind;
    use tokio_tungstenite::tungstenite::Error as WsError;
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    let e = e.into_inner();
    let closed = match e.downcast_ref::<WsError>() {
        Some(
            WsError::ConnectionClosed
            | WsError::AlreadyClosed
            | WsError::Protocol(ProtocolError::SendAfterClosing),
        ) => true,
        Some(WsError::Io(io)) => matches!(
            io.kind(),
            ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
        ),
        _ => false,
    };
    if !closed {
        switch.kill(format!("send failed: {e}"));
    }
}

/// Stops a catch-up's encoding when dropped: a writer that leaves (killed, or its task
/// dropped) does not leave the encoding running on a blocking thread.
struct StopOnDrop(Arc<std::sync::atomic::AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sends the outbox's frames in batches until the connection is killed; a send that fails
/// (the socket reset, or tungstenite's capped write buffer full: the client takes nothing,
/// not even the pongs to its pings) kills it with the error, so that the client's slot is
/// freed at once rather than when its outbox fills or TCP gives up. Ends with the
/// `Disconnect` and close frame, which a failed connection may not take.
pub(super) async fn write_loop<S>(
    mut sink: S,
    mut rx: mpsc::Receiver<Frame>,
    queued: Arc<AtomicUsize>,
    (switch, mut kill): (Switch, watch::Receiver<Option<String>>),
    encodes: Arc<tokio::sync::Semaphore>,
) where
    S: futures_util::Sink<Message, Error = axum::Error> + Unpin,
{
    'frames: loop {
        let frame = tokio::select! {
            biased;
            _ = killed(&mut kill) => break,
            frame = rx.recv() => match frame {
                Some(f) => f,
                None => break,
            },
        };
        let mut next = Some(frame);
        let mut fed = 0;
        while let Some(frame) = next.take() {
            queued.fetch_sub(frame.len(), Ordering::Relaxed);
            match frame {
                Frame::Ready(b) => {
                    if let Err(e) = sink.feed(Message::Binary(b)).await {
                        send_failed(&switch, e);
                        break 'frames;
                    }
                    fed += 1;
                }
                // Encoded off the ordering thread; what was queued after it waits for it.
                Frame::CatchUp(job) => {
                    let cancel = job.cancel.clone();
                    let _stop = StopOnDrop(cancel);
                    let permit = tokio::select! {
                        biased;
                        _ = killed(&mut kill) => break 'frames,
                        p = encodes.clone().acquire_owned() => match p {
                            Ok(p) => p,
                            Err(_) => {
                                switch.kill("the server is stopping");
                                break 'frames;
                            }
                        },
                    };
                    let encode = tokio::task::spawn_blocking(move || {
                        let _permit = permit;
                        job.encode()
                    });
                    let messages = tokio::select! {
                        biased;
                        _ = killed(&mut kill) => break 'frames,
                        m = encode => match m {
                            Ok(m) => m,
                            Err(e) => {
                                switch.kill(format!("a catch-up's encoding failed: {e}"));
                                break 'frames;
                            }
                        },
                    };
                    for m in messages {
                        if let Err(e) = sink.feed(Message::Binary(m)).await {
                            send_failed(&switch, e);
                            break 'frames;
                        }
                        fed += 1;
                    }
                }
            }
            if fed < WRITE_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if let Err(e) = sink.flush().await {
            send_failed(&switch, e);
            break;
        }
    }
    let reason = kill
        .borrow()
        .clone()
        .unwrap_or_else(|| "the server is closing".into());
    let bye = ServerMessage::Disconnect {
        reason: reason.clone(),
    };
    let _ = sink.send(Message::Binary(bye.encode().into())).await;
    let _ = sink.send(close_frame(&reason)).await;
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    /// A sink that takes `ok` messages, then fails every send with tungstenite's "write
    /// buffer full" (a client that takes nothing).
    struct FailingSink {
        ok: usize,
        taken: Vec<Message>,
    }

    impl futures_util::Sink<Message> for FailingSink {
        type Error = axum::Error;
        fn poll_ready(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn start_send(mut self: std::pin::Pin<&mut Self>, m: Message) -> Result<(), Self::Error> {
            use tokio_tungstenite::tungstenite::{Error as WsError, Message as WsMessage};
            if self.taken.len() == self.ok {
                let full = WsError::WriteBufferFull(Box::new(WsMessage::Binary(Bytes::new())));
                return Err(axum::Error::new(full));
            }
            self.taken.push(m);
            Ok(())
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_close(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// A send that fails closes the connection with the error (the reader and the ordering
    /// thread see the reason and the client's slot is freed), where the writer used to end
    /// silently and leave the client joined until its outbox filled.
    #[tokio::test]
    async fn a_failed_send_kills_the_connection_with_the_error() {
        let (kill_tx, kill_rx) = watch::channel(None);
        let switch = Switch(Arc::new(kill_tx));
        let (tx, rx) = mpsc::channel(8);
        for i in 0..3u8 {
            tx.send(Frame::Ready(Bytes::from(vec![i]))).await.unwrap();
        }
        let mut sink = FailingSink {
            ok: 2,
            taken: Vec::new(),
        };
        let encodes = Arc::new(tokio::sync::Semaphore::new(1));
        let queued = Arc::new(AtomicUsize::new(3));
        write_loop(&mut sink, rx, queued, (switch, kill_rx.clone()), encodes).await;
        let why = kill_rx.borrow().clone();
        assert_eq!(
            why.as_deref(),
            Some("send failed: Write buffer is full"),
            "the reason"
        );
        // The two frames sent before the failure, nothing after it (the goodbye failed too).
        assert_eq!(
            sink.taken,
            vec![
                Message::Binary(Bytes::from(vec![0u8])),
                Message::Binary(Bytes::from(vec![1u8]))
            ]
        );
        // The writer ended (its end of the outbox dropped) though the outbox was open.
        assert!(tx.is_closed());
    }
}
