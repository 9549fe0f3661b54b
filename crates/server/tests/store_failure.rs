//! The world store under a running server when another process gets in its way.
//!
//! - Another process holds SQLite's write lock on the world for 8 s (longer than the
//!   store's busy wait of 5 s) while clients edit: the server keeps running, no
//!   acknowledged op is lost, and the ops taken while the lock is held are acknowledged
//!   after it is let go.
//! - Another process writes a row where the server's next op goes: that is no busy spell
//!   but a failure; the ordering thread stops, every client is told why, the handle says
//!   why, and what was acknowledged before is in the file.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use loam_client::{Client, ClientConfig, ClientEvent};
use loam_field::{CsgMode, EditOp, Field, FieldSettings};
use loam_protocol::ServerMessage;
use loam_store::Store;

use crate::util::{
    Rng, dig, disconnect_reason, factory, gen_json, joined, new_world, op_msg, recv_until,
    send_raw, start, viewer,
};

const WORLD_ENV: &str = "LOAM_NET_LOCK_WORLD";
const HOLD: Duration = Duration::from_secs(8);

/// Nanoseconds since the Unix epoch: one clock for this process and the lock holder's.
fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The lock holder's process: a plain SQLite connection (SQLite's own locks, not the
/// store's `flock`, which a connection of another program does not take) opens the world,
/// takes the write lock with `BEGIN EXCLUSIVE` as an `sqlite3` shell would, says `LOCKED`,
/// holds it [`HOLD`], says `RELEASING` with the time, and lets go. Without the environment
/// variable (a plain `--ignored` run) it returns at once.
#[test]
#[ignore = "the lock holder of a_foreign_lock_for_8_s_stops_nothing_and_loses_nothing"]
fn lock_holder_child() {
    let Ok(world) = std::env::var(WORLD_ENV) else {
        return;
    };
    let lock = rusqlite::Connection::open(&world).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    println!("LOCKED");
    std::thread::sleep(HOLD);
    println!("RELEASING {}", now_ns());
    lock.execute_batch("ROLLBACK").unwrap();
}

/// The lock holder's process, killed when dropped (also when the test fails).
struct Holder(Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the lock holder on `world`; returns it and its lines, each with the time this
/// process read it.
fn hold_lock(world: &Path) -> (Holder, tokio::sync::mpsc::UnboundedReceiver<(String, u128)>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "store_failure::lock_holder_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WORLD_ENV, world)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { return };
            // The harness's "test … " may precede it on the same line.
            for word in ["LOCKED", "RELEASING"] {
                if let Some(at) = line.find(word) {
                    let _ = tx.send((line[at..].trim().to_string(), now_ns()));
                }
            }
        }
    });
    (Holder(child), rx)
}

/// What the editing clients saw.
#[derive(Default)]
struct Seen {
    /// Acknowledged own ops by sequence number: the op, when it was sent and when its
    /// acknowledgement came (ns since the epoch).
    acked: BTreeMap<u64, (EditOp, u128, u128)>,
    /// Ops sent and not (yet) acknowledged, by client and op id: the op and when sent.
    waiting: BTreeMap<(u64, u64), (EditOp, u128)>,
    refused: usize,
    /// Connection errors (none expected).
    errors: Vec<String>,
}

fn op(rng: &mut Rng) -> EditOp {
    EditOp::Sphere {
        mode: if rng.chance(0.7) {
            CsgMode::Subtract
        } else {
            CsgMode::Union
        },
        center: [
            rng.range(-12.0, 12.0),
            rng.range(-1.0, 1.0),
            rng.range(-12.0, 12.0),
        ],
        radius: rng.range(1.0, 2.0),
        material: 2,
        blend: 0.0,
    }
}

/// A client that sends an op about every 25 ms until `stop`, then waits for all its ops;
/// it ends at the first connection error (recorded in `seen`).
async fn editor(i: u64, url: String, seen: Arc<Mutex<Seen>>, stop: Arc<AtomicBool>) -> Client {
    let v = viewer(0.0, 0.0, 0.0, 24.0);
    let mut c = Client::connect(ClientConfig::new(url, v, factory()))
        .await
        .unwrap();
    let mut rng = Rng(0x10c + i);
    let mut n = 0;
    let start = tokio::time::Instant::now();
    while (!stop.load(Ordering::Relaxed) || c.pending_ops() > 0) && c.is_connected() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "client {i}: ops not acknowledged"
        );
        if !stop.load(Ordering::Relaxed) {
            let o = op(&mut rng);
            n += 1;
            let at = now_ns();
            match c.send_op(n, o.clone()).await {
                Ok(id) => {
                    seen.lock().unwrap().waiting.insert((i, id), (o, at));
                }
                Err(e) => {
                    seen.lock().unwrap().errors.push(e.to_string());
                    break;
                }
            }
        }
        let until = tokio::time::Instant::now() + Duration::from_millis(25);
        while let Ok(e) = tokio::time::timeout_at(until, c.next_event()).await {
            let mut s = seen.lock().unwrap();
            match e {
                Ok(ClientEvent::Op {
                    own: true,
                    op_id,
                    seq,
                    ..
                }) => {
                    let (o, sent) = s.waiting.remove(&(i, op_id)).expect("an op sent");
                    s.acked.insert(seq, (o, sent, now_ns()));
                }
                Ok(ClientEvent::Refused { op_id, .. }) => {
                    s.waiting.remove(&(i, op_id));
                    s.refused += 1;
                }
                Ok(_) => {}
                Err(e) => {
                    s.errors.push(e.to_string());
                    break;
                }
            }
        }
    }
    c
}

/// Another process holds the world's write lock for 8 s while four clients edit, some
/// 160 ops/s in all: the server keeps running (no client is dropped, it answers after),
/// every op sent while the lock was held is acknowledged after the lock was let go, and
/// after the stop the world file holds every acknowledged op under its sequence number and
/// loads to the clients' field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_lock_for_8_s_stops_nothing_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = start(&world, |c| c.bake_every_ops = 40).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..4)
        .map(|i| tokio::spawn(editor(i, server.url(), seen.clone(), stop.clone())))
        .collect();
    let acked = || seen.lock().unwrap().acked.len();
    let wait_for = async |n: usize| {
        let start = tokio::time::Instant::now();
        while acked() < n {
            let errors = seen.lock().unwrap().errors.clone();
            assert_eq!(errors, Vec::<String>::new(), "no client lost its server");
            assert!(start.elapsed() < Duration::from_secs(60), "no progress");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    // Under way, with bakes, before the lock.
    wait_for(100).await;

    let (holder, mut lines) = hold_lock(&world);
    let (locked, locked_at) = tokio::time::timeout(Duration::from_secs(60), lines.recv())
        .await
        .expect("the lock holder starts within 60 s")
        .unwrap();
    assert_eq!(locked, "LOCKED");
    let (releasing, _) = tokio::time::timeout(HOLD * 3, lines.recv())
        .await
        .expect("the lock holder lets go")
        .unwrap();
    let released_at: u128 = releasing
        .strip_prefix("RELEASING ")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{releasing:?}"));
    drop(holder);
    let before = acked();
    wait_for(before + 100).await;
    stop.store(true, Ordering::Relaxed);
    let mut clients = Vec::new();
    for t in tasks {
        clients.push(t.await.unwrap());
    }
    let s = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(s.errors, Vec::<String>::new(), "no client lost its server");
    assert!(s.waiting.is_empty(), "every op sent was answered");

    // The ops sent while the lock was surely held were all acknowledged, after it.
    let during: Vec<_> = s
        .acked
        .iter()
        .filter(|(_, (_, sent, _))| (locked_at..released_at).contains(sent))
        .collect();
    assert!(
        during.len() > 100,
        "ops taken during the lock: {}",
        during.len()
    );
    for (seq, (_, _, at)) in &during {
        assert!(
            *at >= released_at,
            "op {seq}, sent during the lock, acknowledged {:.3} s before its end",
            (released_at - at) as f64 / 1e9
        );
    }

    // The last digs' lumps come loose on the ground worker's next search (ops the server
    // makes itself, in the log and sent to the clients): wait for it, then nothing changes
    // the field any more. Without this wait a lump removed after the clients' last sync
    // was in the file but not in their field (a loaded machine, whose searches lag).
    let start = tokio::time::Instant::now();
    while server.status().await.unwrap().digs_pending > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "digs never searched"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Still serving: everyone converged, and the server answers.
    for (i, c) in clients.iter_mut().enumerate() {
        assert!(c.sync(false).await.unwrap().matches(), "client {i}");
    }
    let whole = clients[0].confirmed_field().hash();
    let status = server.status().await.unwrap();
    assert_eq!(status.clients, 4);
    assert!(status.accepted >= s.acked.len() as u64);
    drop(clients);
    server.shutdown().await.unwrap();

    // Every acknowledged op is in the file, under its sequence number.
    let mut store = Store::open(&world).unwrap();
    let log: BTreeMap<u64, EditOp> = store
        .ops_after(0)
        .unwrap()
        .into_iter()
        .map(|e| (e.seq, e.op))
        .collect();
    for (seq, (op, _, _)) in &s.acked {
        assert_eq!(log.get(seq), Some(op), "acknowledged op {seq}");
    }
    let g = factory()(&gen_json()).unwrap();
    let loaded = store
        .load(Field::new(FieldSettings::default(), Arc::new(g)).unwrap())
        .unwrap();
    assert_eq!(loaded.field.hash(), whole);
    eprintln!(
        "acknowledged {} ({} sent during the lock), refused {}, made by the server {}, log {}",
        s.acked.len(),
        during.len(),
        s.refused,
        status.made,
        loaded.last_seq
    );
}

/// Another process writes a row of its own where the server's next op goes: the group
/// commit fails (no busy spell to wait out), the server stops, the client is disconnected
/// with the reason, and the op it sent then is not in the log while the acknowledged one
/// is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_store_stops_the_server_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = start(&world, |_| {}).await;
    let mut ws = joined(&server.url(), None).await;
    send_raw(&mut ws, op_msg(1, dig(0.0))).await;
    let acked = recv_until(&mut ws, |m| match m {
        ServerMessage::Op(r) if r.op_id == 1 => Some(r.seq),
        _ => None,
    })
    .await;

    // SQLite's own locks, not the store's `flock`: a plain connection can write.
    let foreign = rusqlite::Connection::open(&world).unwrap();
    foreign
        .execute(
            "INSERT INTO ops (seq, stroke, op) VALUES (?1, 0, x'00')",
            [acked as i64 + 1],
        )
        .unwrap();
    drop(foreign);
    send_raw(&mut ws, op_msg(2, dig(4.0))).await;
    let reason = tokio::time::timeout(Duration::from_secs(30), disconnect_reason(&mut ws))
        .await
        .expect("the client is told within 30 s");
    assert_eq!(reason, "the server's world store failed");
    let why = server.stopped().await;
    assert!(why.contains("UNIQUE constraint failed"), "{why}");

    let err = server.shutdown().await.expect_err("the store's failure");
    let err = loam_server::error_chain(&err);
    assert!(err.contains("UNIQUE constraint failed"), "{err}");
    let c = rusqlite::Connection::open(&world).unwrap();
    let rows: Vec<(i64, Vec<u8>)> = c
        .prepare("SELECT seq, op FROM ops ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2, "the acknowledged op and the foreign row");
    assert_eq!(rows[0].0, acked as i64);
    assert_eq!(rows[1], (acked as i64 + 1, vec![0]));
}
