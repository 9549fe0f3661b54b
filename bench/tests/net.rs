//! The load benchmark's driver at a small size, against a server that bakes every 50 ops (so
//! bakes are encoded beside the appends while clients edit): every op is confirmed, every
//! client converges, the warm-up is reported apart, and the world file loads to the
//! server's field after a clean stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use loam_bench::{BenchConfig, bench_net};
use loam_field::FieldSettings;
use loam_protocol::GeneratorFactory;
use loam_store::Store;

// The server tests' scaffolding (worlds, configs, a started server), shared as it is.
#[path = "../../crates/server/tests/util.rs"]
#[allow(dead_code)]
mod util;

use util::{factory, new_world, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_clients_under_load_converge_and_the_baked_world_loads() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = start(&world, |c| c.bake_every_ops = 50).await;
    // The clients build the generator once between them (each got its own: a DEM decoded
    // per client).
    let built = Arc::new(AtomicUsize::new(0));
    let counted: GeneratorFactory = {
        let built = built.clone();
        Arc::new(move |json: &str| {
            built.fetch_add(1, Ordering::SeqCst);
            factory()(json)
        })
    };
    let mut cfg = BenchConfig::new(server.url(), 4, 40.0, 1.5, counted);
    cfg.warmup_s = 0.5;
    let report = bench_net(cfg).await.unwrap();
    assert_eq!(built.load(Ordering::SeqCst), 1);
    assert!(report.converged, "{report:?}");
    assert!(report.diverged.is_empty());
    assert_eq!((report.dropped, report.lost_ops), (0, 0), "{report:?}");
    assert_eq!(report.clients, 4);
    assert!(report.sent > 0);
    assert_eq!(report.confirmed, report.sent, "every op came back ordered");
    // Four clients at 40 ops/s cannot confirm more than they send in the 1.5 s window.
    assert!(
        report.ops_per_s > 0.0 && report.ops_per_s <= 160.0 * 1.05,
        "{report:?}"
    );
    assert!(report.seconds >= 1.5);
    assert_eq!(report.warmup_s, 0.5);
    let (p50, p99) = (report.p50_ms.unwrap(), report.p99_ms.unwrap());
    assert!(report.warmup_p99_ms.unwrap() > 0.0 && p50 > 0.0);
    assert!(p50 <= p99);
    // One whole second in the 1.5 s window: at most the offered 160 ops confirmed in it.
    let worst = report.worst_second_ops.expect("a whole second");
    assert!(worst > 0 && worst <= 168, "{report:?}");
    assert!(report.worst_second_p99_ms.unwrap() > 0.0);
    let line: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
    for key in [
        "ops_per_s",
        "p50_ms",
        "p99_ms",
        "dropped",
        "lost_ops",
        "converged",
        "diverged",
        "worst_second_ops",
        "worst_second_p99_ms",
    ] {
        assert!(line.get(key).is_some(), "the JSON line has {key}");
    }
    let status = server.status().await.unwrap();
    assert_eq!(status.accepted, report.sent);
    // The status waits until nothing is in flight: every accepted op was released and
    // timed, every record appended.
    let l = status.latency;
    assert_eq!(l.ops.count, status.accepted);
    assert!(l.apply.count >= status.accepted);
    // Every op taken up was queued first; every group commit's report was taken.
    assert_eq!(l.queued.count, l.apply.count);
    assert_eq!(l.acks.count, l.appends.count);
    // No op was refused, so each queued wait is part of an accepted op's time.
    assert!(l.queued.max_ms <= l.ops.max_ms, "{l:?}");
    let appended = l.ops_per_append * l.appends.count as f64;
    assert_eq!(
        appended.round() as u64,
        status.accepted + status.made,
        "{l:?}"
    );
    assert!(l.ops.p50_ms > 0.0 && l.ops.p50_ms <= l.ops.p99_ms && l.ops.p99_ms <= l.ops.max_ms);
    // An op is released after its group commit: no op waits less than the shortest one.
    assert!(l.ops.max_ms >= l.appends.p50_ms, "{l:?}");
    // Ticks every 50 ms over the 2 s run.
    assert!(l.ticks.count >= 10, "{l:?}");
    // No window was taken before: the first holds the same ops; the next starts empty.
    assert_eq!(server.take_latency().await.unwrap().ops, l.ops);
    assert_eq!(server.take_latency().await.unwrap().ops.count, 0);
    let (_, hash) = server.hash(None).await.unwrap();
    server.shutdown().await.unwrap();
    let mut store = Store::open(&world).unwrap();
    let info = store.info().unwrap();
    assert_eq!(info.bake_seq, info.last_seq, "the last bake covers the log");
    let generator = factory()(&info.generator_json).unwrap();
    let field =
        loam_field::Field::new(FieldSettings::default(), std::sync::Arc::new(generator)).unwrap();
    assert_eq!(store.load(field).unwrap().field.hash(), hash);
}

/// Bad numbers are typed errors before anyone connects.
#[tokio::test]
async fn bad_benchmark_settings_are_refused() {
    let mut cfg = BenchConfig::new("ws://127.0.0.1:1/ws", 1, 10.0, 1.0, factory());
    cfg.warmup_s = -1.0;
    let e = bench_net(cfg).await.unwrap_err();
    assert!(e.to_string().contains("warmup_s"), "{e}");
    let cfg = BenchConfig::new("ws://127.0.0.1:1/ws", 0, 10.0, 1.0, factory());
    assert!(
        bench_net(cfg)
            .await
            .unwrap_err()
            .to_string()
            .contains("clients")
    );
}

/// A rate below one op per window ends with the window, not at the next op (it once slept
/// until then: 10 000 s at 0.0001 ops/s), and a client that cannot connect is named once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_below_one_op_per_window_ends_with_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    // 1e-20 ops/s: 1/rate s does not fit a Duration (it panicked).
    for rate in [0.0001, 1e-20] {
        let mut cfg = BenchConfig::new(server.url(), 8, rate, 0.5, factory());
        cfg.warmup_s = 0.0;
        let started = std::time::Instant::now();
        let report = tokio::time::timeout(std::time::Duration::from_secs(60), bench_net(cfg))
            .await
            .expect("the benchmark ends")
            .unwrap();
        assert!(started.elapsed().as_secs_f64() < 30.0);
        // Client 0 sends at once; client i starts i/8 of a period (1/rate s) later, past the
        // window's end.
        assert_eq!(report.sent, 1, "{report:?}");
        assert!(report.converged);
    }
    server.shutdown().await.unwrap();

    let cfg = BenchConfig::new("ws://127.0.0.1:1/ws", 1, 10.0, 1.0, factory());
    let e = bench_net(cfg).await.unwrap_err();
    // The whole chain, as `loam bench-net` prints it.
    let mut chain = vec![e.to_string()];
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        chain.push(c.to_string());
        cause = c.source();
    }
    let e = chain.join(": ");
    assert!(e.starts_with("client 0: WebSocket: "), "{e}");
    assert_eq!(e.matches("WebSocket").count(), 1, "{e}");
}

/// A server restarted in the middle of a run: every client counts its dropped connection,
/// reconnects to the new server on the same world and address, resumes, and converges; the
/// run ends with its JSON line (it used to stop with a bare "connection reset" error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_mid_run_counts_dropped_connections_and_converges() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let first = start(&world, |_| {}).await;
    let addr = first.local_addr();
    let mut cfg = BenchConfig::new(first.url(), 4, 20.0, 3.0, factory());
    cfg.warmup_s = 0.2;
    let bench = tokio::spawn(bench_net(cfg));
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    first.shutdown().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let second = start(&world, |c| c.listen = addr).await;
    let report = bench.await.unwrap().unwrap();
    assert_eq!(report.dropped, 4, "{report:?}");
    assert!(report.converged && report.diverged.is_empty(), "{report:?}");
    assert_eq!(
        report.confirmed + report.resumed_ops + report.lost_ops,
        report.sent,
        "{report:?}"
    );
    // Ops went on after the restart: the second server took some.
    let status = second.status().await.unwrap();
    assert!(status.accepted > 0, "{report:?}");
    second.shutdown().await.unwrap();
}

/// Clients sending faster than the server's message rate are dropped again and again; on
/// each reconnect the ops the server had taken are reported (`resumed_ops`), so the run's
/// totals add up: every op sent is confirmed, found taken, or lost (ten went uncounted
/// before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ops_taken_before_a_rate_limit_drop_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    // A low limit, so that even a slow machine's debug build sends past it within the run.
    let server = start(&new_world(dir.path()), |c| {
        c.limits.ops_per_second = 200.0;
        c.limits.op_burst = 200.0;
    })
    .await;
    let mut cfg = BenchConfig::new(server.url(), 2, 1500.0, 2.0, factory());
    cfg.warmup_s = 0.1;
    let report = bench_net(cfg).await.unwrap();
    assert!(report.dropped >= 2, "{report:?}");
    assert!(report.confirmed > 0, "{report:?}");
    assert_eq!(
        report.confirmed + report.resumed_ops + report.lost_ops,
        report.sent,
        "{report:?}"
    );
    assert!(report.converged, "{report:?}");
    server.shutdown().await.unwrap();
}
