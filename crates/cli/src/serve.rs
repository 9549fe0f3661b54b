//! `loam serve` (the authoritative multiplayer server on a world file) and `loam bench-net`
//! (N real WebSocket clients against a server, one JSON line of results). Both are thin:
//! the work is in `loam-server` and `loam-bench`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use loam_bench::{BenchConfig, bench_net};
use loam_protocol::GeneratorFactory;
use loam_server::{BackupPlan, ServerConfig, serve};

use crate::session::GeneratorSpec;

/// Arguments of `loam serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The world file (made with `loam world new` or the editor); ops are appended to it.
    /// With `--nats`: this node's own world file, its snapshot of the world's stream (made
    /// from the world's genesis if missing; default `loam-WORLD_ID-nodeN.loam` here), so a
    /// restart replays only the stream's tail.
    #[arg(long, required_unless_present = "nats")]
    pub world: Option<PathBuf>,
    /// Run as a node of a world on NATS JetStream (`nats://HOST:PORT`, or several servers
    /// of a NATS cluster separated by commas), made with
    /// `loam world new --nats URL --world-id NAME`: clients connect to any node; every op
    /// goes through the world's stream, in one order.
    #[arg(long, requires = "world_id")]
    pub nats: Option<String>,
    /// The world's id on NATS (with `--nats`).
    #[arg(long, requires = "nats")]
    pub world_id: Option<String>,
    /// This node's number, 1 to 4095 (with `--nats`): the client ids it gives out carry it.
    /// Each node of a world needs its own.
    #[arg(long, default_value_t = 1, requires = "nats", value_parser = clap::value_parser!(u16).range(1..=4095))]
    pub node_id: u16,
    /// Seconds between two copies of this node's world file for the world's snapshot (with
    /// `--nats`; 0: never), made in `WORLD.snapshots` beside the file (the last one kept);
    /// the node holding the block lease puts its copy in the JetStream object store
    /// `LOAM_<world>_SNAP`, and a node started without its file takes it and replays only
    /// the stream after it. With `--backups`, each backup is the copy.
    #[arg(long, default_value_t = 600, requires = "nats", value_parser = clap::value_parser!(u64).range(0..=2_592_000))]
    pub snapshot_every: u64,
    /// Address to listen on, HOST:PORT (a name such as localhost is resolved, its first
    /// address taken). Loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:7878", value_parser = parse_listen)]
    pub listen: SocketAddr,
    /// Clients must present this token in their hello (not empty).
    #[arg(long, value_parser = parse_nonempty)]
    pub token: Option<String>,
    /// Most clients at once, at least 1.
    #[arg(long, default_value_t = 256, value_parser = parse_max_clients)]
    pub max_clients: usize,
    /// Serve the browser editor too: the folder `tools/web_build.sh DIR` made (it must hold
    /// an index.html), at http://HOST:PORT/ beside the WebSocket at /ws.
    #[arg(long, value_name = "DIR")]
    pub web: Option<PathBuf>,
    /// Catch-up each client may be sent, MiB a second on average (the bricks of regions its
    /// viewer moves into; 4 times as much at once), from 0.0625 to 65 536: a client
    /// moving faster waits for its latest region rather than slowing everyone.
    #[arg(long, default_value_t = 16.0, value_parser = parse_catch_up)]
    pub catch_up_mib_per_s: f64,
    /// Back the world up into this folder while it is served (made if missing): a whole
    /// copy when the server starts and every `--backup-every` minutes after, named after
    /// the world, a tag of its path and the UTC time
    /// (`WORLD-1a2b3c4d-20261202T081500.123Z.loam`), copied a little at a time between edits.
    /// Nothing else can copy a served world: the server holds it locked. Worlds may share a
    /// folder: each prunes only its own copies (same file, same path).
    #[arg(long)]
    pub backup_dir: Option<PathBuf>,
    /// Minutes between two backups, from 0.0167 (1 s; any value that rounds to 1 s at
    /// millisecond precision) to 43 200 (30 days). Fractions are minutes too: 0.5 is 30 s.
    #[arg(long, default_value_t = 30.0, allow_negative_numbers = true, value_parser = parse_backup_every, requires = "backup_dir")]
    pub backup_every: f64,
    /// Backups kept in `--backup-dir` (1 to 10 000): the oldest of this world's beyond are
    /// deleted after each new one.
    #[arg(long, default_value_t = 24, allow_negative_numbers = true, value_parser = parse_backup_keep, requires = "backup_dir")]
    pub backup_keep: usize,
}

/// `minutes` as the whole milliseconds the server keeps.
fn backup_every_ms(minutes: f64) -> f64 {
    (minutes * 60_000.0).round()
}

fn parse_backup_every(s: &str) -> Result<f64, String> {
    // Checked at the millisecond precision the server keeps, so that 0.0167 (and 0.016666,
    // 1 s to the millisecond) is one second rather than just under it.
    number(
        s,
        |m: f64| (1_000.0..=43_200.0 * 60_000.0).contains(&backup_every_ms(m)),
        "0.0167 to 43200 minutes (1 s to 30 days)",
    )
}

fn parse_backup_keep(s: &str) -> Result<usize, String> {
    let n = number(s, |n: i64| (1..=10_000).contains(&n), "1 to 10000 backups")?;
    Ok(n as usize)
}

/// A token or name: any text but the empty one (a server with an empty token would refuse
/// everyone; a player without a name shows as nothing).
pub(crate) fn parse_nonempty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(s.into())
    }
}

/// A listening address: `IP:PORT`, or `NAME:PORT` resolved to its first address.
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    if let Some((_, port)) = s.rsplit_once(':')
        && port.parse::<u16>().is_err()
    {
        return Err(format!("the port {port:?} is not a number from 0 to 65535"));
    }
    std::net::ToSocketAddrs::to_socket_addrs(s)
        .map_err(|e| match s.rsplit_once(':') {
            Some((host, _)) => format!("the name {host:?} does not resolve ({e})"),
            None => format!("not HOST:PORT ({e})"),
        })?
        .next()
        .ok_or_else(|| "the name resolves to no address".into())
}

fn parse_metres(s: &str) -> Result<f64, String> {
    number(s, |m: f64| m > 0.0 && m <= 512.0, "above 0, at most 512 m")
}

fn parse_catch_up(s: &str) -> Result<f64, String> {
    number(
        s,
        |m: f64| (0.0625..=65_536.0).contains(&m),
        "0.0625 to 65536 MiB/s",
    )
}

/// A client limit of at least 1 (0 would refuse everyone).
fn parse_max_clients(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("at least 1 (0 would refuse every client)".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A number that `ok` accepts; `why` says which when it does not. (`loam_bench::bench_net`
/// checks the same ranges; here they fail before anything connects, with clap's usage.)
fn number<T: std::str::FromStr + Copy>(
    s: &str,
    ok: impl Fn(T) -> bool,
    why: &str,
) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match s.parse::<T>() {
        Ok(v) if ok(v) => Ok(v),
        Ok(_) => Err(why.into()),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_clients(s: &str) -> Result<usize, String> {
    // Read as a signed number, so that a negative one gets the range, not "invalid digit".
    let n = number(s, |n: i64| (1..=10_000).contains(&n), "1 to 10000 clients")?;
    Ok(n as usize)
}

fn parse_rate(s: &str) -> Result<f64, String> {
    number(
        s,
        |r: f64| r > 0.0 && r <= 1e5,
        "above 0 and at most 100000 ops/s per client",
    )
}

/// A measured window of at least a second: a shorter one holds a handful of ops, and a rate
/// over it says nothing (1e-9 s printed 367 ops/s for one op in 2.7 ms).
fn parse_seconds(s: &str) -> Result<f64, String> {
    number(s, |t: f64| (1.0..=3600.0).contains(&t), "1 to 3600 s")
}

fn parse_warmup(s: &str) -> Result<f64, String> {
    number(s, |t: f64| (0.0..=600.0).contains(&t), "0 to 600 s")
}

/// Arguments of `loam bench-net`.
#[derive(Debug, clap::Args)]
pub struct BenchNetArgs {
    /// The server, e.g. ws://127.0.0.1:7878/ws (without a path, /ws is taken). Given more
    /// than once (nodes of one world, `loam serve --nats`), client `i` connects to the
    /// `i mod n`-th.
    #[arg(long, required = true)]
    pub url: Vec<String>,
    /// Distance between clients, metres (above 0): the default 128 keeps their views apart;
    /// less than twice `--view-radius` plus the server's margin (16 m) makes them overlap,
    /// so every op is sent to several clients.
    #[arg(long, default_value_t = 128.0, value_parser = parse_metres)]
    pub spacing: f64,
    /// View radius of each client, metres (above 0, at most 512).
    #[arg(long, default_value_t = 12.0, value_parser = parse_metres)]
    pub view_radius: f64,
    /// The share of each client's ops that are block places (0 to 1): stone blocks on the
    /// ground near it, some a little above (they fall), some refused (taken, or in the
    /// ground: not counted lost). Their counts are `block_ops`, `block_confirmed`,
    /// `block_refused`; the round-trip figures stay the terrain ops'.
    #[arg(long, default_value_t = 0.0, value_parser = parse_share)]
    pub blocks: f64,
    /// Clients (1 to 10 000).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true, value_parser = parse_clients)]
    pub clients: usize,
    /// Ops per second per client (above 0, at most 100 000). `loam serve` disconnects a client
    /// that sends more than 1 000 messages per second on average beyond a burst of 1 000 (its
    /// rate limit: a run of a few seconds a little above it can pass).
    #[arg(long, default_value_t = 313.0, allow_negative_numbers = true, value_parser = parse_rate)]
    pub rate: f64,
    /// Seconds of load measured, after the warm-up (1 to 3 600).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true, value_parser = parse_seconds)]
    pub seconds: f64,
    /// Seconds of load before the measured window (the first edits in each client's place
    /// generate its bricks); its p99 is printed as `warmup_p99_ms` (0 to 600).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = parse_warmup)]
    pub warmup: f64,
    /// The server's token, if it has one.
    #[arg(long, value_parser = parse_nonempty)]
    pub token: Option<String>,
}

/// The generators of world files: the session spec a world records, heightmaps read from
/// their (absolute) paths.
pub(crate) fn factory() -> GeneratorFactory {
    Arc::new(|json: &str| {
        let spec: GeneratorSpec = serde_json::from_str(json).map_err(|e| e.to_string())?;
        spec.build(Path::new("."))
            .map(|(g, _)| g)
            // With its causes (a missing heightmap file says why).
            .map_err(|e| format!("{:#}", anyhow::Error::from(e)))
    })
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Runs `loam serve` until Ctrl-C or SIGTERM (then shuts down cleanly: the log is durable
/// either way).
///
/// # Errors
/// A missing or bad world file, an address in use.
pub fn run_serve(args: &ServeArgs) -> anyhow::Result<()> {
    let node = args.nats.as_ref().map(|url| {
        let mut n = loam_server::cluster::NodeConfig::new(
            url.clone(),
            args.world_id.clone().unwrap_or_default(),
        );
        n.node_id = args.node_id;
        n.snapshot_every =
            (args.snapshot_every > 0).then(|| Duration::from_secs(args.snapshot_every));
        n
    });
    let world = match (&args.world, &node) {
        (Some(w), _) => w.clone(),
        (None, Some(n)) => PathBuf::from(format!("loam-{}-node{}.loam", n.world_id, n.node_id)),
        (None, None) => anyhow::bail!("--world FILE is needed (or --nats URL --world-id NAME)"),
    };
    anyhow::ensure!(!world.is_dir(), "{:?} is a folder, not a world file", world);
    anyhow::ensure!(
        node.is_some() || world.is_file(),
        "no world file {:?} (make one with `loam world new {} --session \
         examples/generated.json`, or another session's terrain)",
        world,
        world.display()
    );
    // Joins, leaves and refusals on stderr (stdout keeps the one "serving" line scripts
    // read); `RUST_LOG` filters, `info` by default.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    huge_pages_off();
    let mut config = ServerConfig::new(&world, factory());
    config.node = node.clone();
    config.listen = args.listen;
    config.token = args.token.clone();
    config.web = args.web.clone();
    config.limits.max_clients = args.max_clients;
    config.limits.catch_up_bytes_per_second = args.catch_up_mib_per_s * 1024.0 * 1024.0;
    config.limits.catch_up_burst_bytes = 4.0 * config.limits.catch_up_bytes_per_second;
    config.backups = args.backup_dir.as_ref().map(|dir| BackupPlan {
        dir: dir.clone(),
        every: Duration::from_millis(backup_every_ms(args.backup_every) as u64),
        keep: args.backup_keep,
    });
    runtime()?.block_on(async {
        let what = match &node {
            Some(n) => format!(
                "world {} on {} as node {} (snapshot {})",
                n.world_id,
                n.nats_url,
                n.node_id,
                world.display()
            ),
            None => world.display().to_string(),
        };
        let server = serve(config)
            .await
            .with_context(|| format!("serving {what} on {}", args.listen))?;
        println!("loam: serving {what} on {}", server.url());
        if let Some(dir) = &args.web {
            println!(
                "loam: the browser editor ({}) at http://{}/",
                dir.display(),
                server.local_addr()
            );
        }
        if !args.listen.ip().is_loopback() && args.token.is_none() {
            println!(
                "loam: warning: {} is reachable beyond this machine and no --token is set: anyone who reaches it can edit the world",
                args.listen
            );
        }
        {
            let ctrl_c = tokio::signal::ctrl_c();
            let term = terminated();
            let stopped = server.stopped();
            tokio::pin!(ctrl_c, term, stopped);
            let mut every = tokio::time::interval_at(
                tokio::time::Instant::now() + LATENCY_EVERY,
                LATENCY_EVERY,
            );
            loop {
                tokio::select! {
                    r = &mut ctrl_c => break r.context("waiting for Ctrl-C")?,
                    r = &mut term => break r.context("waiting for SIGTERM")?,
                    why = &mut stopped => anyhow::bail!("the server stopped: {why}"),
                    _ = every.tick() => {
                        if let Ok(l) = server.take_latency().await {
                            log_latency(&l);
                        }
                    }
                }
            }
        }
        server.shutdown().await?;
        println!("loam: stopped");
        Ok(())
    })
}

/// How often `loam serve` logs where its time went ([`log_latency`]).
const LATENCY_EVERY: Duration = Duration::from_secs(60);

/// Logs (info) the server's part of its clients' round trips, the part of it spent queued for
/// the ordering thread, and the group commits over the last window, if any client op was
/// released in it.
fn log_latency(l: &loam_server::ServerLatency) {
    if l.ops.count == 0 {
        return;
    }
    tracing::info!(
        ops = l.ops.count,
        p50_ms = l.ops.p50_ms,
        p99_ms = l.ops.p99_ms,
        max_ms = l.ops.max_ms,
        queued_p99_ms = l.queued.p99_ms,
        commits = l.appends.count,
        commit_p99_ms = l.appends.p99_ms,
        commit_max_ms = l.appends.max_ms,
        "the last minute's ops, from arrival to release"
    );
}

/// Turns transparent huge pages off for this process: each first touch of one is a page
/// fault of milliseconds, on whichever thread meets it (`loam_server::disable_transparent_huge_pages`).
/// A refusal is only reported: the server runs as well, with a longer tail.
fn huge_pages_off() {
    if let Err(e) = loam_server::disable_transparent_huge_pages() {
        eprintln!(
            "loam: warning: transparent huge pages stay on ({e}): expect a longer latency tail"
        );
    }
}

/// A share from 0 to 1.
fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number from 0 to 1")),
    }
}

/// Resolves on SIGTERM (a service manager's stop), so it stops as cleanly as on Ctrl-C;
/// never elsewhere than Unix.
async fn terminated() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        term.recv().await;
        Ok(())
    }
    #[cfg(not(unix))]
    std::future::pending().await
}

/// Runs `loam bench-net` and prints its JSON line.
///
/// # Errors
/// No server at the URL, a refused hello.
pub fn run_bench(args: &BenchNetArgs) -> anyhow::Result<()> {
    huge_pages_off();
    let mut config = BenchConfig::new(
        args.url[0].clone(),
        args.clients,
        args.rate,
        args.seconds,
        factory(),
    );
    config.token = args.token.clone();
    config.warmup_s = args.warmup;
    config.more_urls = args.url[1..].to_vec();
    config.spacing_m = args.spacing;
    config.view_radius_m = args.view_radius;
    config.block_share = args.blocks;
    let report = match runtime()?.block_on(bench_net(config)) {
        Ok(r) => r,
        Err(e) => {
            // Still one JSON line on stdout, for a script that reads it: no figures, and why.
            println!("{}", failed_json(&e, args.clients));
            return Err(e.into());
        }
    };
    println!("{}", report.json());
    degraded(&report).map_or(Ok(()), |why| {
        Err(anyhow::anyhow!("the run was degraded: {why}"))
    })
}

/// The JSON line of a run that could not measure (a client's hello refused, no server at
/// the URL, a bad number): `converged` false, `error` the cause with its sources.
fn failed_json(e: &loam_bench::BenchError, clients: usize) -> String {
    let why = loam_server::error_chain(e);
    serde_json::json!({ "error": why, "converged": false, "clients": clients }).to_string()
}

/// Why a benchmark's figures are not a clean run, if they are not: clients that did not
/// converge, dropped connections, ops never confirmed.
fn degraded(report: &loam_bench::BenchReport) -> Option<String> {
    let mut why = Vec::new();
    if !report.diverged.is_empty() || (!report.converged && report.unchecked.is_empty()) {
        why.push(format!(
            "{} of {} clients did not converge",
            report.diverged.len().max(1),
            report.clients
        ));
    }
    if !report.unchecked.is_empty() {
        why.push(format!(
            "{} of {} clients could not compare their hashes with the server's",
            report.unchecked.len(),
            report.clients
        ));
    }
    if report.dropped > 0 {
        why.push(format!("{} dropped connections", report.dropped));
    }
    if report.lost_ops > 0 {
        why.push(format!("{} ops never confirmed", report.lost_ops));
    }
    (!why.is_empty()).then(|| why.join(", "))
}

#[cfg(test)]
mod tests {
    /// A world's generator that cannot be built says why, causes included (a missing
    /// heightmap file's error was cut to its path).
    #[test]
    fn a_generator_error_keeps_its_cause() {
        let json = r#"{"kind": "heightmap", "path": "/nonexistent/dem.png"}"#;
        let Err(e) = super::factory()(json) else {
            panic!("built a generator from a missing file");
        };
        assert!(
            e.contains("/nonexistent/dem.png") && e.contains("No such file"),
            "{e}"
        );
    }

    /// A run that could not measure still prints one JSON line: not converged, and the
    /// error with its causes (which client, and why).
    #[test]
    fn a_failed_run_prints_why_as_json() {
        let e = loam_bench::BenchError::Client {
            client: 3,
            error: loam_client::ClientError::Disconnected {
                reason: "the world is gone".into(),
            },
        };
        let v: serde_json::Value = serde_json::from_str(&super::failed_json(&e, 64)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "error": "client 3: the server closed the connection: the world is gone",
                "converged": false,
                "clients": 64,
            })
        );
    }

    /// `--backup-every` is checked at the millisecond the server keeps: one second written
    /// with a few digits is one second, not refused as just under it (a fresh-user trial
    /// found the help's own "1/60" and 0.016666 refused).
    #[test]
    fn backup_periods_are_checked_to_the_millisecond() {
        for ok in ["0.0167", "0.016666", "0.5", "30", "43200"] {
            assert!(super::parse_backup_every(ok).is_ok(), "{ok}");
        }
        for bad in ["0.0166", "0", "-1", "43200.01", "nan", "inf", "1/60"] {
            assert!(super::parse_backup_every(bad).is_err(), "{bad}");
        }
        let why = super::parse_backup_every("0.01").unwrap_err();
        assert_eq!(why, "0.0167 to 43200 minutes (1 s to 30 days)");
    }

    /// bench-net fails (after its JSON line) exactly when the run was degraded, and says how.
    #[test]
    fn a_degraded_run_is_named() {
        let clean = loam_bench::BenchReport {
            ops_per_s: 20_000.0,
            p50_ms: Some(1.5),
            p99_ms: Some(20.0),
            dropped: 0,
            lost_ops: 0,
            block_ops: 0,
            block_confirmed: 0,
            block_refused: 0,
            converged: true,
            unchecked: Vec::new(),
            diverged: Vec::new(),
            clients: 64,
            sent: 220_000,
            confirmed: 220_000,
            resumed_ops: 0,
            seconds: 10.0,
            warmup_s: 1.0,
            warmup_p99_ms: Some(80.0),
            worst_second_ops: Some(19_800),
            worst_second_p99_ms: Some(12.0),
        };
        assert_eq!(super::degraded(&clean), None);
        let bad = loam_bench::BenchReport {
            dropped: 3,
            lost_ops: 12,
            converged: false,
            diverged: vec![loam_bench::Diverged {
                client: 5,
                seq: 100,
                terrain: true,
                blocks: false,
            }],
            ..clean.clone()
        };
        assert_eq!(
            super::degraded(&bad).as_deref(),
            Some("1 of 64 clients did not converge, 3 dropped connections, 12 ops never confirmed")
        );
        // The server gone at the end: nothing diverged, nothing could be compared.
        let stopped = loam_bench::BenchReport {
            converged: false,
            unchecked: (0..64).collect(),
            ..clean.clone()
        };
        assert_eq!(
            super::degraded(&stopped).as_deref(),
            Some("64 of 64 clients could not compare their hashes with the server's")
        );
    }
}
