//! The load benchmark: N real WebSocket clients editing at a fixed rate.
//!
//! Client `i` stands on a grid (`spacing_m` apart) and digs and builds small balls (radius
//! 0.6–1.4 m) on the ground within 6 m of where it stands, `rate` ops per second (client `i`
//! of `N` sending its first op `i / N` of a period after the start), for `warmup_s` then
//! `seconds`. Latency is from sending an op to receiving it back in the
//! server's order. The figures count the ops sent after the warm-up (the first edits in a
//! place generate its bricks on the server and on the client, a one-off cost that a
//! player's first second in a new place pays); the warm-up's own p99 is reported beside
//! them. At the end every client waits for its last ops and compares its field with the
//! server's over its region.
//!
//! A client whose connection drops (a server restarted, a network cut) counts it in
//! `dropped`, sends nothing while it is down, and reconnects every
//! [`RECONNECT_EVERY`], resuming from its last op; its ops the server never confirmed are
//! `lost_ops`. So the run always ends with its figures.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loam_blocks::{BlockOp, BlockPos, BlockSize, MaterialTable};
use loam_field::{CsgMode, EditOp, Generator};
use serde::Serialize;

use loam_client::{Client, ClientConfig, ClientError, ClientEvent};
use loam_protocol::{GeneratorFactory, Viewer};

/// Why the load benchmark could not run to its figures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A setting is out of range.
    #[error("bad setting `{name}`: {why}")]
    Config {
        /// The setting.
        name: &'static str,
        /// Its range.
        why: String,
    },
    /// A client could not connect, or failed other than by losing its connection.
    #[error("client {client}")]
    Client {
        /// The client's number (0-based).
        client: usize,
        /// What went wrong.
        #[source]
        error: ClientError,
    },
    /// A client's task panicked or was cancelled.
    #[error("a client task failed: {0}")]
    Task(String),
}

/// What to run ([`bench_net`]).
#[derive(Clone)]
pub struct BenchConfig {
    /// The server's URL.
    pub url: String,
    /// Other nodes of the same world (`loam serve --nats`): client `i` connects to the
    /// `i mod n`-th of `url` and these. Default none.
    pub more_urls: Vec<String>,
    /// Clients.
    pub clients: usize,
    /// Ops per second per client.
    pub rate: f64,
    /// How long they send after the warm-up, seconds: the measured window.
    pub seconds: f64,
    /// How long they send before the measured window, seconds. Default 1.
    pub warmup_s: f64,
    /// The server's token, if any.
    pub token: Option<String>,
    /// Builds the world's generator (as for [`ClientConfig`]).
    pub generator: GeneratorFactory,
    /// Distance between clients, metres. Default 128: at 1 m voxels, clients' regions
    /// (view radius plus the server's margin, in whole bricks) do not overlap.
    pub spacing_m: f64,
    /// View radius of each client, metres. Default 12.
    pub view_radius_m: f64,
    /// Told, once every client has joined, the moment the measured window will start (the
    /// warm-up's end): e.g. to take the server's latency for the same window
    /// (`ServerHandle::take_latency`). Default none.
    pub window_start: Option<Arc<dyn Fn(Instant) + Send + Sync>>,
    /// The share of each client's ops that are block places (0 to 1; default 0): a stone
    /// block on the ground near the client, or a little above it (it falls); some are
    /// refused (the place is taken, or in the ground), which is not a loss. The rest are
    /// terrain digs and builds, whose round trips the figures are.
    pub block_share: f64,
}

impl BenchConfig {
    /// Defaults for the rest.
    pub fn new(
        url: impl Into<String>,
        clients: usize,
        rate: f64,
        seconds: f64,
        generator: GeneratorFactory,
    ) -> Self {
        Self {
            url: url.into(),
            more_urls: Vec::new(),
            clients,
            rate,
            seconds,
            warmup_s: 1.0,
            token: None,
            generator,
            spacing_m: 128.0,
            view_radius_m: 12.0,
            window_start: None,
            block_share: 0.0,
        }
    }
}

/// The figures ([`BenchReport::json`] prints them as one line).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchReport {
    /// Terrain ops sent in the measured window and confirmed by the server, per second of
    /// that window, all clients together (block ops are counted apart, `block_confirmed`:
    /// with `--blocks 1` this is 0).
    pub ops_per_s: f64,
    /// Median latency from sending an op to receiving it back ordered, milliseconds; `None`
    /// (JSON null) when no op of the window came back.
    pub p50_ms: Option<f64>,
    /// 99th percentile of that latency, milliseconds; `None` as for `p50_ms`.
    pub p99_ms: Option<f64>,
    /// Connections dropped during the run (all clients together; a client that reconnects
    /// and drops again counts twice).
    pub dropped: u64,
    /// Ops sent but never confirmed (refused, lost to a disconnect, or unanswered 10 s
    /// after the end); block ops too, but a refused block op is not lost
    /// (`block_refused`).
    pub lost_ops: u64,
    /// Block ops sent ([`BenchConfig::block_share`]; not in `sent` or the latencies)…
    pub block_ops: u64,
    /// …of them confirmed in the server's order…
    pub block_confirmed: u64,
    /// …and refused (the place taken, or in the ground).
    pub block_refused: u64,
    /// Whether every client's field equalled the server's over its region at the end (a
    /// client that could not reconnect to compare did not).
    pub converged: bool,
    /// The clients (0-based, as in their names `bench-{client}`) whose hashes could not be
    /// compared at the end (down and unable to reconnect, e.g. the server stopped, or the
    /// comparison itself failed); they count as not converged.
    pub unchecked: Vec<usize>,
    /// The clients whose hashes were compared and differed, and which of their hashes
    /// differed from the server's; empty when every compared one matched.
    pub diverged: Vec<Diverged>,
    /// Clients that ran.
    pub clients: usize,
    /// Ops sent, warm-up included.
    pub sent: u64,
    /// Ops confirmed, warm-up included. At the end of a run
    /// `sent = confirmed + resumed_ops + lost_ops`.
    pub confirmed: u64,
    /// Ops the server had taken when a client's connection dropped, their answers lost with
    /// it ([`ClientEvent::Resumed`]): applied (in the world the client resumed into) or
    /// refused; no round trip.
    pub resumed_ops: u64,
    /// Seconds of the measured window: from the end of the warm-up to the end of sending,
    /// or to the last confirmation of an op sent in it if that is later.
    pub seconds: f64,
    /// Seconds of warm-up before the window.
    pub warmup_s: f64,
    /// The 99th percentile latency of the ops sent during the warm-up, milliseconds; `None`
    /// with no warm-up.
    pub warmup_p99_ms: Option<f64>,
    /// The fewest ops confirmed in one whole second of the measured window (seconds counted
    /// from its start; the last, partial one left out): a stall inside the window, which
    /// `ops_per_s` averages out. `None` for a window under a second.
    pub worst_second_ops: Option<u64>,
    /// The highest p99 of the ops confirmed in one whole second of the window, milliseconds
    /// (`None` as for `worst_second_ops`, or with no op confirmed in any).
    pub worst_second_p99_ms: Option<f64>,
}

impl BenchReport {
    /// One JSON line.
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("a report serialises")
    }
}

/// A client whose region differed from the server's at the end of a benchmark.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Diverged {
    /// The client's index (0-based, as in its name `bench-{client}`).
    pub client: usize,
    /// The sequence number both hashes were at.
    pub seq: u64,
    /// Whether the terrain (field) hashes differed.
    pub terrain: bool,
    /// Whether the block hashes differed.
    pub blocks: bool,
}

struct One {
    sent: u64,
    /// Block ops sent, confirmed and refused, and the ids of those not yet answered.
    blocks: (u64, u64, u64),
    block_ids: std::collections::BTreeSet<u64>,
    /// Latencies of the ops sent in the measured window.
    /// Each with when it was confirmed, seconds after the window's start.
    latencies: Vec<(f64, Duration)>,
    /// Latencies of the ops sent during the warm-up.
    warmup: Vec<Duration>,
    /// Connections dropped.
    dropped: u64,
    /// Ops never confirmed.
    lost: u64,
    /// Ops found taken by the server on a reconnect ([`ClientEvent::Resumed`]).
    resumed: u64,
    converged: bool,
    diverged: Option<Diverged>,
    last_ack: Instant,
}

/// How often a bench client whose connection dropped tries to reconnect.
pub const RECONNECT_EVERY: Duration = Duration::from_millis(250);

/// `Ok` if `e` left `client` without its connection (a drop to count, not a failure of the
/// benchmark); `Err(e)` for any other error.
fn dropped(client: &Client, e: ClientError) -> Result<(), ClientError> {
    if client.is_connected() {
        Err(e)
    } else {
        Ok(())
    }
}

/// SplitMix64 step: a deterministic sequence of `u64`.
fn mix(z: &mut u64) -> u64 {
    *z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut x = *z;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn unit(z: &mut u64) -> f64 {
    (mix(z) >> 11) as f64 / (1u64 << 53) as f64
}

async fn one(
    i: usize,
    cfg: BenchConfig,
    ready: tokio::sync::mpsc::Sender<Result<(), BenchError>>,
    mut go: tokio::sync::watch::Receiver<Option<Instant>>,
) -> Result<One, ClientError> {
    let cols = (cfg.clients as f64).sqrt().ceil().max(1.0) as usize;
    // Half a brick (at 1 m voxels) off the grid lines, so that each client's ops stay in
    // one brick column.
    let (x, z) = (
        (i % cols) as f64 * cfg.spacing_m + 16.0,
        (i / cols) as f64 * cfg.spacing_m + 16.0,
    );
    let viewer = |y| Viewer {
        position: [x, y, z],
        radius: cfg.view_radius_m,
    };
    let url_of = |k: usize| match k {
        0 => cfg.url.clone(),
        k => cfg.more_urls[k - 1].clone(),
    };
    let mut node = i % (1 + cfg.more_urls.len());
    let mut config = ClientConfig::new(url_of(node), viewer(0.0), cfg.generator.clone());
    config.token = cfg.token.clone();
    config.name = format!("bench-{i}");
    let mut client = match Client::connect(config).await {
        Ok(c) => c,
        Err(e) => {
            let e = BenchError::Client {
                client: i,
                error: e,
            };
            let _ = ready.send(Err(e)).await;
            // The error went to `ready`; the benchmark stops on it.
            return Err(ClientError::NotConnected);
        }
    };
    // Stand on the ground.
    let y = client.generator().surface_height(x, z);
    if y != 0.0 {
        client.set_viewer(viewer(y)).await?;
    }
    let _ = ready.send(Ok(())).await;
    drop(ready);
    let start = go
        .wait_for(|s| s.is_some())
        .await
        .map_err(|_| ClientError::Timeout("the start"))?
        .expect("checked");
    tokio::time::sleep_until(start.into()).await;
    let mut seed = 0x1000 + i as u64;
    let measured = start + Duration::from_secs_f64(cfg.warmup_s);
    let end = measured + Duration::from_secs_f64(cfg.seconds);
    // One op per 1/rate s. Clients' schedules are spread evenly over a period (client i
    // starts i/N of a period in), as independent players' are, rather than all sending at
    // the same instants. A first op or period past the window's end (a tiny rate: 1/rate may
    // not even fit a Duration) is cut to just past it, which changes nothing: the loop ends
    // with the window.
    let window = end - start + Duration::from_secs(1);
    let past = |s: f64| Duration::try_from_secs_f64(s).map_or(window, |d| d.min(window));
    let period = past(1.0 / cfg.rate);
    let phase = past(i as f64 / cfg.clients as f64 / cfg.rate);
    let mut tick = tokio::time::interval_at((start + phase).into(), period);
    // Open loop: a late tick is made up at once, so the offered rate stays `rate` whatever the
    // timer's granularity (1 ms) and the scheduling delays.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut out = One {
        sent: 0,
        blocks: (0, 0, 0),
        block_ids: std::collections::BTreeSet::new(),
        latencies: Vec::new(),
        warmup: Vec::new(),
        dropped: 0,
        lost: 0,
        resumed: 0,
        converged: false,
        diverged: None,
        last_ack: start,
    };
    let take = |e: ClientEvent, out: &mut One| match e {
        ClientEvent::Op {
            latency: Some(l), ..
        } => {
            let now = Instant::now();
            if now - l >= measured {
                out.latencies.push(((now - measured).as_secs_f64(), l));
                out.last_ack = now;
            } else {
                out.warmup.push(l);
            }
        }
        ClientEvent::BlockOp {
            own: true, op_id, ..
        } if out.block_ids.remove(&op_id) => out.blocks.1 += 1,
        ClientEvent::Refused { op_id, .. } if out.block_ids.remove(&op_id) => out.blocks.2 += 1,
        ClientEvent::Refused { .. } => out.lost += 1,
        ClientEvent::Lost { op_ids } => out.lost += op_ids.len() as u64,
        // Taken by the server before a drop, their answers lost with the connection.
        ClientEvent::Resumed { op_ids } => out.resumed += op_ids.len() as u64,
        _ => {}
    };
    while Instant::now() < end {
        if !client.is_connected() {
            tokio::select! {
                _ = tokio::time::sleep(RECONNECT_EVERY) => {}
                _ = tokio::time::sleep_until(end.into()) => break,
            }
            match client.reconnect().await {
                // The ticks missed while down are not made up: those ops were never offered.
                Ok(_) => tick.reset(),
                Err(e @ ClientError::AnotherWorld(_)) => return Err(e),
                // Its node is gone: the next node of the world, if there are others (a
                // client resumes on any node of a world on NATS JetStream).
                Err(_) if !cfg.more_urls.is_empty() => {
                    node = (node + 1) % (1 + cfg.more_urls.len());
                    client.set_url(url_of(node));
                }
                Err(_) => {}
            }
            continue;
        }
        tokio::select! {
            _ = tick.tick() => {
                let (dx, dz) = (12.0 * unit(&mut seed) - 6.0, 12.0 * unit(&mut seed) - 6.0);
                let (cx, cz) = (x + dx, z + dz);
                let cy = client.generator().surface_height(cx, cz);
                if cfg.block_share > 0.0 && unit(&mut seed) < cfg.block_share {
                    let at = [cx.floor(), cy.ceil(), cz.floor()].map(|c| c as i32);
                    let Ok(at) = BlockPos::new(BlockSize::Full, at) else { continue };
                    let op = BlockOp::Place {
                        at,
                        material: MaterialTable::STONE,
                        shape: Default::default(),
                        paint: None,
                    };
                    match client.send_block_op(&op).await {
                        Ok(id) => {
                            out.blocks.0 += 1;
                            out.block_ids.insert(id);
                        }
                        Err(e) => {
                            dropped(&client, e)?;
                            out.dropped += 1;
                        }
                    }
                    continue;
                }
                let op = EditOp::Sphere {
                    mode: if mix(&mut seed).is_multiple_of(2) { CsgMode::Subtract } else { CsgMode::Union },
                    center: [cx, cy, cz],
                    radius: 0.6 + 0.8 * unit(&mut seed),
                    material: (mix(&mut seed) % 8) as u8,
                    blend: 0.0,
                };
                match client.send_op(out.sent + 1, op).await {
                    Ok(_) => out.sent += 1,
                    Err(e) => {
                        dropped(&client, e)?;
                        out.dropped += 1;
                    }
                }
            }
            e = client.next_event() => match e {
                Ok(e) => take(e, &mut out),
                Err(e) => {
                    dropped(&client, e)?;
                    out.dropped += 1;
                }
            },
            // A rate below one op per window would otherwise sleep past its end.
            _ = tokio::time::sleep_until(end.into()) => break,
        }
    }
    let wait = Instant::now() + Duration::from_secs(10);
    // Down at the end: more tries within the wait (a restarted server may still be opening
    // its world), so that its last ops and its hash can be compared.
    while !client.is_connected() {
        match client.reconnect().await {
            Ok(_) => {}
            Err(e @ ClientError::AnotherWorld(_)) => return Err(e),
            Err(_) if Instant::now() + RECONNECT_EVERY < wait => {
                tokio::time::sleep(RECONNECT_EVERY).await;
            }
            Err(_) => {
                while let Some(e) = client.queued_event() {
                    take(e, &mut out);
                }
                out.lost += (client.pending_ops() + client.pending_block_ops()) as u64;
                return Ok(out);
            }
        }
    }
    while client.pending_ops() + client.pending_block_ops() > 0 && Instant::now() < wait {
        match tokio::time::timeout_at(wait.into(), client.next_event()).await {
            Ok(Ok(e)) => take(e, &mut out),
            Ok(Err(e)) => {
                dropped(&client, e)?;
                out.dropped += 1;
                break;
            }
            Err(_) => break,
        }
    }
    // What a reconnect queued (ops found taken or lost) when nothing was left to wait for.
    while let Some(e) = client.queued_event() {
        take(e, &mut out);
    }
    out.lost += (client.pending_ops() + client.pending_block_ops()) as u64;
    let report = match client.sync(false).await {
        Ok(r) => r,
        Err(e) => {
            dropped(&client, e)?;
            out.dropped += 1;
            return Ok(out);
        }
    };
    out.converged = report.matches();
    if !out.converged {
        out.diverged = Some(Diverged {
            client: i,
            seq: report.seq,
            terrain: report.server != report.local,
            blocks: report.blocks_server != report.blocks_local,
        });
    }
    client.close().await;
    Ok(out)
}

/// `factory`, building each generator once for all the clients: they all get the same JSON
/// from the server, and a DEM's heights are shared by a generator's clones (a 38 MB DEM
/// decoded by each of 32 clients took 4.4 GB).
fn built_once(factory: GeneratorFactory) -> GeneratorFactory {
    let last: Mutex<Option<(String, Generator)>> = Mutex::new(None);
    Arc::new(move |json: &str| {
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((j, g)) = last.as_ref()
            && j == json
        {
            return Ok(g.clone());
        }
        let g = factory(json)?;
        *last = Some((json.to_string(), g.clone()));
        Ok(g)
    })
}

/// The `p` quantile of `sorted` in milliseconds; `None` for no samples.
fn percentile(sorted: &[Duration], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    Some(sorted[i].as_secs_f64() * 1e3)
}

/// Runs the benchmark: connects `clients` clients to `url`, has each send `rate` ops per
/// second for `seconds`, waits for the last confirmations, checks every client's region
/// against the server's.
///
/// # Errors
/// [`BenchError::Config`] for a bad number; [`BenchError::Client`] with the first client's
/// connection or protocol error.
pub async fn bench_net(cfg: BenchConfig) -> Result<BenchReport, BenchError> {
    let bad = |name, why: &str| BenchError::Config {
        name,
        why: why.into(),
    };
    if cfg.clients == 0 || cfg.clients > 10_000 {
        return Err(bad("clients", "in [1, 10000]"));
    }
    if !(cfg.rate > 0.0 && cfg.rate <= 1e5) {
        return Err(bad("rate", "in (0, 100000] ops/s per client"));
    }
    if !(cfg.seconds > 0.0 && cfg.seconds <= 3600.0) {
        return Err(bad("seconds", "in (0, 3600]"));
    }
    if !(0.0..=600.0).contains(&cfg.warmup_s) {
        return Err(bad("warmup_s", "in [0, 600]"));
    }
    let mut cfg = cfg;
    cfg.generator = built_once(cfg.generator);
    // Everyone connects first; sending starts together once all are in.
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(cfg.clients);
    let (go_tx, go_rx) = tokio::sync::watch::channel(None::<Instant>);
    let tasks: Vec<_> = (0..cfg.clients)
        .map(|i| tokio::spawn(one(i, cfg.clone(), ready_tx.clone(), go_rx.clone())))
        .collect();
    drop(ready_tx);
    for _ in 0..cfg.clients {
        match ready_rx.recv().await {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                tasks.iter().for_each(|t| t.abort());
                return Err(e);
            }
            None => break,
        }
    }
    let start = Instant::now() + Duration::from_millis(100);
    let _ = go_tx.send(Some(start));
    let measured = start + Duration::from_secs_f64(cfg.warmup_s);
    if let Some(told) = &cfg.window_start {
        told(measured);
    }
    let mut latencies = Vec::new();
    let mut warmup = Vec::new();
    let (mut sent, mut dropped, mut lost, mut resumed, mut converged) = (0, 0, 0, 0, true);
    let mut blocks = (0, 0, 0);
    let mut unchecked = Vec::new();
    let mut diverged = Vec::new();
    let mut last = measured;
    for (i, t) in tasks.into_iter().enumerate() {
        let one = t
            .await
            .map_err(|e| BenchError::Task(e.to_string()))?
            .map_err(|error| BenchError::Client { client: i, error })?;
        sent += one.sent;
        blocks.0 += one.blocks.0;
        blocks.1 += one.blocks.1;
        blocks.2 += one.blocks.2;
        dropped += one.dropped;
        lost += one.lost;
        resumed += one.resumed;
        converged &= one.converged;
        // Neither matched nor found to differ: never compared.
        if !one.converged && one.diverged.is_none() {
            unchecked.push(i);
        }
        diverged.extend(one.diverged);
        last = last.max(one.last_ack);
        latencies.extend(one.latencies);
        warmup.extend(one.warmup);
    }
    warmup.sort();
    let seconds = last.duration_since(measured).as_secs_f64().max(cfg.seconds);
    let (worst_second_ops, worst_second_p99_ms) = worst_second(&latencies, seconds);
    let mut latencies: Vec<Duration> = latencies.into_iter().map(|(_, l)| l).collect();
    latencies.sort();
    Ok(BenchReport {
        ops_per_s: latencies.len() as f64 / seconds,
        p50_ms: percentile(&latencies, 0.50),
        p99_ms: percentile(&latencies, 0.99),
        dropped,
        lost_ops: lost,
        block_ops: blocks.0,
        block_confirmed: blocks.1,
        block_refused: blocks.2,
        converged,
        unchecked,
        diverged,
        clients: cfg.clients,
        sent,
        confirmed: (latencies.len() + warmup.len()) as u64,
        resumed_ops: resumed,
        seconds,
        warmup_s: cfg.warmup_s,
        warmup_p99_ms: percentile(&warmup, 0.99),
        worst_second_ops,
        worst_second_p99_ms,
    })
}

/// Over the whole seconds of a window of `seconds` (the last, partial one left out), from
/// `(confirmed at, latency)` samples (seconds after the window's start): the fewest ops
/// confirmed in one second, and the highest p99 of one second's ops (milliseconds; seconds
/// with none confirmed have no p99). `(None, None)` for a window under a second.
fn worst_second(samples: &[(f64, Duration)], seconds: f64) -> (Option<u64>, Option<f64>) {
    let whole = seconds.floor();
    // A run is at most an hour (`BenchConfig::seconds`) plus its last confirmations; NaN
    // and anything past a day are not a window.
    if !(1.0..=86_400.0).contains(&whole) {
        return (None, None);
    }
    let mut per_second = vec![Vec::new(); whole as usize];
    for &(at, latency) in samples {
        if at >= 0.0 && at < whole {
            per_second[at as usize].push(latency);
        }
    }
    let fewest = per_second.iter().map(|s| s.len() as u64).min();
    let worst_p99 = per_second
        .iter_mut()
        .filter_map(|s| {
            s.sort();
            percentile(s, 0.99)
        })
        .max_by(f64::total_cmp);
    (fewest, worst_p99)
}

#[cfg(test)]
mod tests {
    use super::worst_second;
    use std::time::Duration;

    /// A stall in the middle second shows in both figures; the partial last second and
    /// samples outside the window do not count.
    #[test]
    fn the_worst_second_of_a_window() {
        let ms = Duration::from_millis;
        let mut samples = Vec::new();
        // Second 0: 100 ops at 1 ms; second 1: 10 at 50 ms; second 2: 100, one at 9 ms.
        samples.extend((0..100).map(|i| (0.005 * f64::from(i), ms(1))));
        samples.extend((0..10).map(|i| (1.05 + 0.09 * f64::from(i), ms(50))));
        samples
            .extend((0..100).map(|i| (2.0 + 0.005 * f64::from(i), ms(if i == 0 { 9 } else { 2 }))));
        // The partial last second (3.0..3.5) and a sample before the window: left out.
        samples.extend((0..3).map(|i| (3.1 + 0.1 * f64::from(i), ms(500))));
        samples.push((-0.5, ms(700)));
        assert_eq!(worst_second(&samples, 3.5), (Some(10), Some(50.0)));
        // A second with nothing confirmed is the fewest (0) and has no p99.
        let idle: Vec<_> = samples
            .iter()
            .copied()
            .filter(|(t, _)| *t < 1.0 || *t >= 2.0)
            .collect();
        assert_eq!(worst_second(&idle, 3.5), (Some(0), Some(2.0)));
        assert_eq!(worst_second(&samples, 0.9), (None, None));
        assert_eq!(worst_second(&[], f64::NAN), (None, None));
        assert_eq!(worst_second(&[], f64::INFINITY), (None, None));
    }
}
