//! Shared fixtures: a cheap generator described by JSON, a world file, a server, raw sockets.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use loam_client::{Client, ClientConfig};
use loam_field::{
    CaveSettings, CsgMode, EditOp, FieldSettings, Generator, LogEntry, NoiseLayer,
    NoiseTerrainSettings,
};
use loam_protocol::{ClientMessage, Hello, ServerMessage};
use loam_protocol::{DEFAULT_MAX_MESSAGE_BYTES, GeneratorFactory, PROTOCOL_VERSION, Viewer};
use loam_server::{ServerConfig, ServerHandle, serve};
use loam_store::Store;
use serde::{Deserialize, Serialize};
use tokio_tungstenite::tungstenite::Message;

/// The generator spec the test worlds record (as the CLI's session spec does).
#[derive(Serialize, Deserialize)]
struct Spec {
    kind: String,
    terrain: NoiseTerrainSettings,
    caves: CaveSettings,
}

const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Gentle ground around y = 0 (one octave of ±0.75 m detail), no caves: cheap bricks.
pub fn gen_json() -> String {
    serde_json::to_string(&Spec {
        kind: "noise".into(),
        terrain: NoiseTerrainSettings {
            base_height: 0.0,
            hills: OFF,
            ridges: OFF,
            ..Default::default()
        },
        caves: CaveSettings {
            enabled: false,
            ..Default::default()
        },
    })
    .unwrap()
}

/// Flat ground: solid below y = 0, no detail, no caves (blocks stand on it exactly).
pub fn flat_json() -> String {
    serde_json::to_string(&Spec {
        kind: "noise".into(),
        terrain: NoiseTerrainSettings {
            base_height: 0.0,
            hills: OFF,
            ridges: OFF,
            detail: OFF,
            ..Default::default()
        },
        caves: CaveSettings {
            enabled: false,
            ..Default::default()
        },
    })
    .unwrap()
}

/// A new world file of flat ground ([`flat_json`]) in `dir`.
pub fn new_flat_world(dir: &Path) -> PathBuf {
    let path = dir.join("flat.loam");
    drop(Store::create(&path, &flat_json(), &FieldSettings::default(), None).unwrap());
    path
}

/// Builds the generator from a [`gen_json`]-shaped spec.
pub fn factory() -> GeneratorFactory {
    Arc::new(|json: &str| {
        let s: Spec = serde_json::from_str(json).map_err(|e| e.to_string())?;
        if s.kind != "noise" {
            return Err(format!("unknown generator kind {:?}", s.kind));
        }
        Generator::noise(&s.terrain, &s.caves).map_err(|e| e.to_string())
    })
}

/// A new world file in `dir`.
pub fn new_world(dir: &Path) -> PathBuf {
    let path = dir.join("world.loam");
    drop(Store::create(&path, &gen_json(), &FieldSettings::default(), None).unwrap());
    path
}

/// A server config on a free loopback port.
pub fn config(world: &Path) -> ServerConfig {
    let mut c = ServerConfig::new(world, factory());
    c.listen = "127.0.0.1:0".parse().unwrap();
    c
}

/// Starts a server with `tweak` applied to the config.
pub async fn start(world: &Path, tweak: impl FnOnce(&mut ServerConfig)) -> ServerHandle {
    let mut c = config(world);
    tweak(&mut c);
    serve(c).await.unwrap()
}

pub fn viewer(x: f64, y: f64, z: f64, radius: f64) -> Viewer {
    Viewer {
        position: [x, y, z],
        radius,
    }
}

/// SplitMix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.range(0.0, 1.0) < p
    }
}

pub type Raw =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A bare WebSocket to the server, speaking the protocol by hand.
pub async fn raw(url: &str) -> Raw {
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

pub async fn send_raw(ws: &mut Raw, bytes: Vec<u8>) {
    ws.send(Message::Binary(bytes.into())).await.unwrap();
}

/// A hello (no token, no resume) with its viewer at `viewer`.
pub fn hello_at(viewer: Viewer) -> Vec<u8> {
    ClientMessage::Hello(Hello {
        protocol: PROTOCOL_VERSION,
        name: "raw".into(),
        token: None,
        viewer,
        resume: None,
    })
    .encode()
}

pub fn hello(token: Option<&str>) -> Vec<u8> {
    ClientMessage::Hello(Hello {
        protocol: PROTOCOL_VERSION,
        name: "raw".into(),
        token: token.map(str::to_string),
        viewer: viewer(0.0, 0.0, 0.0, 8.0),
        resume: None,
    })
    .encode()
}

/// The next server message, or `None` once the connection ends.
pub async fn recv_raw(ws: &mut Raw) -> Option<ServerMessage> {
    let next = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) => {
                    return Some(ServerMessage::decode(&b, DEFAULT_MAX_MESSAGE_BYTES).unwrap());
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
                Some(Ok(_)) => {}
            }
        }
    });
    next.await.expect("the server answers within 20 s")
}

/// Reads messages until one matches `f`; panics if the connection ends first.
pub async fn recv_until<T>(ws: &mut Raw, mut f: impl FnMut(ServerMessage) -> Option<T>) -> T {
    loop {
        let m = recv_raw(ws).await.expect("connection ended");
        if let Some(t) = f(m) {
            return t;
        }
    }
}

/// A ball of radius 2 m dug at `(x, 0, 0)`.
pub fn dig(x: f64) -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, 0.0, 0.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    }
}

/// An op message for op `op_id` (its own stroke).
pub fn op_msg(op_id: u64, op: EditOp) -> Vec<u8> {
    ClientMessage::Op {
        op_id,
        entry: LogEntry::new(0, op_id, op).encode(),
    }
    .encode()
}

/// The reason of the `Disconnect` that ends the connection.
pub async fn disconnect_reason(ws: &mut Raw) -> String {
    loop {
        match recv_raw(ws).await {
            Some(ServerMessage::Disconnect { reason }) => return reason,
            Some(_) => {}
            None => return String::new(),
        }
    }
}

/// A client joins, digs, and its field matches the server's.
pub async fn still_serves(url: &str) {
    let mut c = Client::connect(ClientConfig::new(
        url,
        viewer(0.0, 0.0, 0.0, 8.0),
        factory(),
    ))
    .await
    .unwrap();
    c.send_op(1, dig(3.0)).await.unwrap();
    while c.pending_ops() > 0 {
        c.next_event().await.unwrap();
    }
    assert!(c.sync(false).await.unwrap().matches());
}

/// Says hello and reads up to the end of the snapshot.
pub async fn joined(url: &str, token: Option<&str>) -> Raw {
    let mut ws = raw(url).await;
    send_raw(&mut ws, hello(token)).await;
    recv_until(&mut ws, |m| match m {
        ServerMessage::CatchUp(c) if c.done => Some(()),
        ServerMessage::Refused(r) => panic!("refused: {r}"),
        _ => None,
    })
    .await;
    ws
}

/// A new world whose generator JSON carries `padding` beside the spec's fields (a large
/// generator, as a heightmap world's): its path and the JSON.
pub fn padded_world(dir: &Path, padding: String) -> (PathBuf, String) {
    let mut spec: serde_json::Value = serde_json::from_str(&gen_json()).unwrap();
    spec["padding"] = padding.into();
    let json = spec.to_string();
    let path = dir.join("big.loam");
    drop(Store::create(&path, &json, &FieldSettings::default(), None).unwrap());
    (path, json)
}

/// Digs 36 balls (radius 4 m, 12 m apart) around each of x = 0 and x = 320 through `ws`
/// (op ids 1 to 72), and waits until the last comes back: edited bricks at two places
/// whose regions (with a view of up to about 100 m) do not meet.
pub async fn edit_two_places(ws: &mut Raw) {
    let mut op_id = 0;
    for base in [0.0, 320.0] {
        for i in 0..36 {
            op_id += 1;
            let ball = EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [
                    base + f64::from(i % 6) * 12.0 - 30.0,
                    0.0,
                    f64::from(i / 6) * 12.0 - 30.0,
                ],
                radius: 4.0,
                material: 0,
                blend: 0.0,
            };
            send_raw(ws, op_msg(op_id, ball)).await;
        }
    }
    let last = op_id;
    recv_until(ws, |m| match m {
        ServerMessage::Op(r) if r.op_id == last => Some(()),
        _ => None,
    })
    .await;
}

/// A server process: this test binary running one ignored test (`test`, its full name)
/// with `env`; killed with SIGKILL when dropped (also when the test fails).
pub struct ChildServer(std::process::Child);

impl ChildServer {
    /// Kills it with SIGKILL and waits for it.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts this test binary's ignored test `test` in a process of its own with `env`, and
/// returns it with the port it prints as `LISTENING <port>` (within 60 s).
pub async fn spawn_child_server(test: &str, env: &[(&str, String)]) -> (ChildServer, u16) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        test,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let child = ChildServer(child);
    // Its output is read to the end (a child whose pipe is closed dies on its next line of
    // log) and shown in this test's output.
    let (port_tx, port_rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut port_tx = Some(port_tx);
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            // The harness's "test … " precedes it on the same line.
            match line.find("LISTENING ") {
                Some(at) if port_tx.is_some() => {
                    let port = line[at + 10..].trim().parse::<u16>().unwrap();
                    let _ = port_tx.take().unwrap().send(port);
                }
                _ => println!("[child] {line}"),
            }
        }
    });
    let port = tokio::time::timeout(std::time::Duration::from_secs(60), port_rx)
        .await
        .expect("the server process starts within 60 s")
        .expect("the server process ended without listening");
    (child, port)
}

/// Sends the server's log (warnings, and `loam_server`'s info) to the test's captured
/// output, so a test that fails shows what the server said; `RUST_LOG` overrides the level.
/// Once per test binary; later calls do nothing.
pub fn trace() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,loam_server=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .with_ansi(false)
        .try_init();
}
