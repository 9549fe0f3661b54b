//! The writer thread: the one owner of the world store. The ordering thread hands it a group
//! of ops at a time and goes on applying the next ones while the group is synced to disk.

use std::sync::mpsc;
use std::thread::JoinHandle;

use loam_field::{Field, History};
use loam_store::{LogRecord, Store, StoreError};

use crate::error::NetError;
use tokio::sync::mpsc::UnboundedSender;

/// What the writer does, in order.
pub(crate) enum Write {
    /// Append a group (terrain and block ops) in one transaction, then report `Durable`
    /// with its last sequence number.
    Append(Vec<LogRecord>),
    /// Bake the world (field, history, and the block world's snapshot at physics step
    /// `step`) as it is after op `seq`, then report `Durable { seq }`.
    Bake {
        field: Box<Field>,
        history: Box<History>,
        seq: u64,
        step: u64,
        blocks: Vec<u8>,
    },
}

/// What the writer reports.
pub(crate) enum Ack {
    /// Everything up to this sequence number is durable (or baked).
    Durable(u64),
    /// The store failed; the writer has stopped.
    Failed(String),
}

/// The ordering thread's end of the writer.
pub(crate) struct Writer {
    tx: Option<mpsc::Sender<Write>>,
    thread: Option<JoinHandle<Result<(), StoreError>>>,
}

impl Writer {
    /// Starts the writer over `store`; it reports to `back`.
    pub fn start(store: Store, back: UnboundedSender<Ack>) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Write>();
        let thread = std::thread::Builder::new()
            .name("loam-net-writer".into())
            .spawn(move || run(store, &rx, &back))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues `w`. (A writer that has stopped reports why through the commands.)
    pub fn send(&self, w: Write) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(w);
        }
    }

    /// Runs a last bake (if `last` is given) and stops, closing the store; returns the
    /// first error the writer met.
    pub fn finish(&mut self, last: Option<Write>) -> Result<(), NetError> {
        if let (Some(tx), Some(w)) = (&self.tx, last) {
            let _ = tx.send(w);
        }
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => Ok(r?),
            Some(Err(_)) => Err(NetError::ServerStopped("the writer thread panicked".into())),
            None => Ok(()),
        }
    }
}

fn run(
    mut store: Store,
    rx: &mpsc::Receiver<Write>,
    back: &UnboundedSender<Ack>,
) -> Result<(), StoreError> {
    while let Ok(w) = rx.recv() {
        let (result, seq) = match w {
            Write::Append(entries) => {
                let seq = entries.last().map_or(0, LogRecord::seq);
                (store.append_records(&entries), seq)
            }
            Write::Bake {
                field,
                history,
                seq,
                step,
                blocks,
            } => (
                store
                    .bake_with_blocks(&field, &history, seq, step, &blocks)
                    .map(|_| ()),
                seq,
            ),
        };
        match result {
            // While shutting down nobody listens any more.
            Ok(()) => {
                let _ = back.send(Ack::Durable(seq));
            }
            Err(e) => {
                let _ = back.send(Ack::Failed(crate::error_chain(&e)));
                return Err(e);
            }
        }
    }
    Ok(())
}
