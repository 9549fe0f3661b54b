//! The load benchmark on loopback without the CLI: a server on a fresh world (default noise
//! terrain with caves, 1 m voxels) in a temporary folder, and [`loam_bench::bench_net`]'s
//! clients against it, in one process on a two-worker tokio runtime (the CLI's `loam
//! bench-net --url` runs the same clients against a `loam serve` process). Prints the
//! benchmark's JSON line on stdout, and on stderr the server's part of the measured window
//! (`ServerStatus::latency`) and each thread's time on a CPU and time waiting for one over it
//! (Linux: `/proc/self/task/*/schedstat`).
//!
//! ```text
//! cargo run --release -p loam-net --example bench_local -- [CLIENTS] [RATE] [SECONDS] [SPACING] [ISLANDS]
//! ```
//!
//! `RATE` is ops per second per client. `SPACING` is the distance between clients in metres
//! (default 128: their regions do not overlap; 48: each client also receives its
//! neighbours' ops near the shared edges, and patches where it cannot reproduce them).
//! `ISLANDS` 0 turns off the server's search for lumps of terrain a dig cuts loose (default
//! 1: on, as a server runs). Defaults: 64 clients, 313 ops/s each (20 000 in all), 10 s.
//!
//! To run the server and the clients as two processes (e.g. each pinned to its own core
//! with `taskset`, the nearest this machine comes to clients on other machines):
//! `LOAM_BENCH_SERVE=1 bench_local …` starts only the server, prints its URL and serves
//! until its standard input closes; `LOAM_BENCH_URL=ws://… bench_local …` runs only the
//! clients against it. With `LOAM_BENCH_STATUS=1` as well, the server prints a status line
//! on stderr every 2 s: sequence, physics steps, pieces (falling), and the last 2 s of its
//! latency (physics steps, ground results, ticks, ops) — how a server ages over consecutive
//! client runs.
//!
//! Nodes of a world on NATS JetStream (docs/scale-out.md): with `LOAM_BENCH_SERVE=1`,
//! `LOAM_BENCH_NATS=nats://…` and `LOAM_BENCH_WORLD_ID=NAME` the server is a node of that
//! world (made on the stream if missing; `LOAM_BENCH_NODE_ID`, default 1, numbers the
//! node; its world file in a temporary folder, or at `LOAM_BENCH_FILE`), and
//! `LOAM_BENCH_URL` takes the nodes' URLs
//! separated by commas (client `i` connects to the `i mod n`-th). `tools/cluster_bench.sh`
//! runs one server, one node and two nodes under the same load.

use std::collections::BTreeMap;
use std::sync::Arc;

/// The allocator of `loam serve` (the CLI's).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use loam_bench::{BenchConfig, bench_net};
use loam_field::{CaveSettings, FieldSettings, Generator, NoiseTerrainSettings};
use loam_protocol::GeneratorFactory;
use loam_server::{ServerConfig, serve};
use loam_store::Store;
use serde::Deserialize;

/// The generator spec the world records (the shape of the CLI's session spec).
#[derive(Deserialize)]
struct Spec {
    kind: String,
    #[serde(default)]
    terrain: NoiseTerrainSettings,
    #[serde(default)]
    caves: CaveSettings,
}

fn factory() -> GeneratorFactory {
    Arc::new(|json: &str| {
        let s: Spec = serde_json::from_str(json).map_err(|e| e.to_string())?;
        if s.kind != "noise" {
            return Err(format!("unknown generator kind {:?}", s.kind));
        }
        Generator::noise(&s.terrain, &s.caves).map_err(|e| e.to_string())
    })
}

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // As `loam serve` and `loam bench-net` do.
    loam_server::disable_transparent_huge_pages()?;
    if std::env::var_os("LOAM_BENCH_SERVE").is_some() {
        // The server's log on stderr (warnings, a node's catch-up), as `loam serve` has it.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("loam_server=info"))
            .with_writer(std::io::stderr)
            .try_init();
    }
    let clients: usize = arg(1, 64);
    let rate: f64 = arg(2, 313.0);
    let seconds: f64 = arg(3, 10.0);
    let spacing: f64 = arg(4, 128.0);
    let islands: u8 = arg(5, 1);
    let dir = tempfile::tempdir()?;
    let world = dir.path().join("bench.loam");
    drop(Store::create(
        &world,
        r#"{"kind": "noise"}"#,
        &FieldSettings::default(),
        None,
    )?);
    let mut config = ServerConfig::new(&world, factory());
    config.listen = "127.0.0.1:0".parse()?;
    config.limits.max_clients = clients + 8;
    config.limits.ops_per_second = (2.0 * rate).max(1000.0);
    config.limits.op_burst = config.limits.ops_per_second;
    if islands == 0 {
        config.islands = None;
    }
    if let Ok(urls) = std::env::var("LOAM_BENCH_URL") {
        let mut urls = urls.split(',').map(String::from);
        let first = urls.next().unwrap_or_default();
        let mut bench = BenchConfig::new(first, clients, rate, seconds, factory());
        bench.more_urls = urls.collect();
        bench.spacing_m = spacing;
        println!("{}", bench_net(bench).await?.json());
        return Ok(());
    }
    if let (Ok(nats), Ok(world_id)) = (
        std::env::var("LOAM_BENCH_NATS"),
        std::env::var("LOAM_BENCH_WORLD_ID"),
    ) {
        // The world on the stream, made by the first node that finds none.
        let made = loam_server::cluster::create_world(
            &nats,
            &world_id,
            1,
            r#"{"kind": "noise"}"#,
            FieldSettings::default(),
            None,
            &factory(),
        )
        .await;
        match made {
            Ok(_) | Err(loam_server::cluster::ClusterError::WorldExists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        // The node's own world file is made from the stream's genesis (kept at
        // LOAM_BENCH_FILE, if given: a node restarted on it replays only the tail).
        std::fs::remove_file(&world)?;
        if let Some(file) = std::env::var_os("LOAM_BENCH_FILE") {
            config.world = file.into();
        }
        let mut node = loam_server::cluster::NodeConfig::new(nats, world_id);
        node.node_id = std::env::var("LOAM_BENCH_NODE_ID")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        // Seconds between the node's snapshots (`cluster/snapshot.rs`); 0: never.
        if let Some(every) = std::env::var("LOAM_BENCH_SNAPSHOT_EVERY")
            .ok()
            .and_then(|n| n.parse::<u64>().ok())
        {
            node.snapshot_every = (every > 0).then(|| std::time::Duration::from_secs(every));
        }
        config.node = Some(node);
    }
    let server = serve(config).await?;
    if std::env::var_os("LOAM_BENCH_SERVE").is_some() {
        println!("{}", server.url());
        let stdin = tokio::task::spawn_blocking(|| std::io::read_to_string(std::io::stdin()));
        tokio::pin!(stdin);
        let every = std::env::var_os("LOAM_BENCH_STATUS").is_some();
        loop {
            tokio::select! {
                r = &mut stdin => {
                    r??;
                    break;
                }
                _ = tokio::time::sleep(std::time::Duration::from_secs(2)), if every => {
                    eprintln!("{}", status_line(&server).await?);
                }
            }
        }
        server.shutdown().await?;
        return Ok(());
    }
    let mut bench = BenchConfig::new(server.url(), clients, rate, seconds, factory());
    bench.spacing_m = spacing;
    // The server's latency over the clients' measured window: taken at its start (dropping
    // the warm-up's) and once every op is released at the end.
    let (start_tx, start_rx) = tokio::sync::oneshot::channel();
    let start_tx = std::sync::Mutex::new(Some(start_tx));
    bench.window_start = Some(Arc::new(move |at| {
        if let Some(tx) = start_tx.lock().unwrap().take() {
            let _ = tx.send(at);
        }
    }));
    let warm_up = async {
        if let Ok(at) = start_rx.await {
            tokio::time::sleep_until(at.into()).await;
            let _ = server.take_latency().await;
            return thread_times();
        }
        BTreeMap::new()
    };
    let (report, before) = tokio::join!(bench_net(bench), warm_up);
    let after = thread_times();
    let report = report?;
    println!("{}", report.json());
    let status = server.status().await?;
    let window = server.take_latency().await?;
    eprintln!(
        "server: {} ops in the log ({} made by the server), {} refused, {} pieces",
        status.seq, status.made, status.refused, status.pieces
    );
    let g = status.ground;
    eprintln!(
        "ground worker: {} searches, {} colliders ({} refreshed), busy {:.2} s, generator cache {} hits / {} misses; {} colliders rescued by the ordering thread",
        g.searches,
        g.colliders,
        g.refreshed,
        g.busy_us as f64 * 1e-6,
        g.cache_hits,
        g.cache_misses,
        g.rescued
    );
    let l = window;
    let p = |name: &str, p: loam_server::Percentiles| {
        format!(
            "{name} p50 {:.2} p99 {:.2} max {:.2} ms ({})",
            p.p50_ms, p.p99_ms, p.max_ms, p.count
        )
    };
    eprintln!(
        "server, measured window: {}; {}; {}; {}, {:.1} ops each; {}; {}; {}; {}; {}",
        p("arrival to release", l.ops),
        p("queued", l.queued),
        p("apply", l.apply),
        p("appends", l.appends),
        l.ops_per_append,
        p("acks", l.acks),
        p("ticks", l.ticks),
        p("physics steps", l.steps),
        p("bake snapshots", l.bakes),
        p("ground results", l.ground)
    );
    if !before.is_empty() {
        eprintln!(
            "threads, measured window (s on a CPU / s runnable, waiting for one): {}",
            thread_report(&before, &after)
        );
    }
    server.shutdown().await?;
    Ok(())
}

/// Each thread's time on a CPU and time runnable but waiting for one (ns), by thread id,
/// with its name: `/proc/self/task/*/schedstat` (Linux with schedstats; empty elsewhere).
fn thread_times() -> BTreeMap<u64, (String, u64, u64)> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in dir.flatten() {
        let Ok(tid) = task.file_name().to_string_lossy().parse::<u64>() else {
            continue;
        };
        let read = |f: &str| std::fs::read_to_string(task.path().join(f)).ok();
        let (Some(name), Some(stat)) = (read("comm"), read("schedstat")) else {
            continue;
        };
        let mut n = stat
            .split_whitespace()
            .map(|v| v.parse::<u64>().unwrap_or(0));
        let (run, wait) = (n.next().unwrap_or(0), n.next().unwrap_or(0));
        out.insert(tid, (name.trim().to_string(), run, wait));
    }
    out
}

/// The threads' times between two [`thread_times`], summed by name, busiest first.
fn thread_report(
    before: &BTreeMap<u64, (String, u64, u64)>,
    after: &BTreeMap<u64, (String, u64, u64)>,
) -> String {
    let mut by_name: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (tid, (name, run, wait)) in after {
        let (r0, w0) = before.get(tid).map_or((0, 0), |b| (b.1, b.2));
        let e = by_name.entry(name).or_default();
        e.0 += run.saturating_sub(r0);
        e.1 += wait.saturating_sub(w0);
    }
    let mut rows: Vec<_> = by_name.into_iter().filter(|(_, (r, _))| *r > 0).collect();
    rows.sort_by_key(|(_, (r, _))| std::cmp::Reverse(*r));
    let s = |ns: u64| ns as f64 * 1e-9;
    rows.iter()
        .map(|(name, (r, w))| format!("{name} {:.2}/{:.2}", s(*r), s(*w)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line of the server's state and the latency since the last line (`LOAM_BENCH_STATUS`).
async fn status_line(
    server: &loam_server::ServerHandle,
) -> Result<String, loam_server::ServerError> {
    let st = server.status().await?;
    let l = server.take_latency().await?;
    Ok(format!(
        "seq {} step {} pieces {} falling {} rescued {} | steps n {} mean {:.2} p99 {:.2} max \
         {:.2} ms | ground n {} p99 {:.2} ms | ticks p99 {:.2} ms | ops p99 {:.2} queued p99 \
         {:.2} ms",
        st.seq,
        st.step,
        st.pieces,
        st.falling,
        st.ground.rescued,
        l.steps.count,
        l.steps.mean_ms,
        l.steps.p99_ms,
        l.steps.max_ms,
        l.ground.count,
        l.ground.p99_ms,
        l.ticks.p99_ms,
        l.ops.p99_ms,
        l.queued.p99_ms
    ))
}
