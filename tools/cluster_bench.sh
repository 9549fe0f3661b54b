#!/usr/bin/env bash
# Load on one world (docs/scale-out.md): a single server on its world file, then one node
# and two nodes of a world on NATS JetStream, each under the same bench-net load (CLIENTS
# clients whose views overlap, SPACING m apart, RATE ops/s each, SECONDS measured), with
# the CPU seconds each server process (and nats-server) used per 1 000 ops confirmed
# (utime + stime from /proc over the run). Then the catch-up of a node restarted after the
# other took CATCHUP_S seconds of load alone, and the start of a new node without a file
# from the snapshot the other put (every 5 s). Servers and clients are the release
# `bench_local` example (no Bevy: `cargo build --release -p loam-bench --example
# bench_local`), as for the single-server rows of BENCHMARKS.md; the servers run without
# the search for cut-loose lumps (on nodes it runs on the one holding the block lease),
# so the three are alike.
# Prints one line per run; the JSON lines and logs stay in OUT_DIR.
# Usage: tools/cluster_bench.sh BENCH_LOCAL OUT_DIR [CLIENTS RATE SECONDS SPACING CATCHUP_S]
set -euo pipefail
bin=$(realpath "$1")
out=$2
clients=${3:-64}
rate=${4:-50}
seconds=${5:-10}
spacing=${6:-24}
catchup_s=${7:-10}
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; pkill -f "sleep 100000" 2>/dev/null || true; }
trap cleanup EXIT
ticks=$(getconf CLK_TCK)
cpu_s() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }

# Starts a server (bench_local serving until its standard input closes; extra environment
# in "$@"); sets srv_pid and srv_url.
serve() {
  local name=$1
  shift
  (sleep 100000 | env LOAM_BENCH_SERVE=1 "$@" "$bin" "$clients" "$rate" "$seconds" "$spacing" 0 \
    >"$out/$name.out" 2>"$out/$name.log") &
  srv_pid=""
  for _ in $(seq 100); do
    srv_pid=$(pgrep -n -f "^$bin $clients $rate" || true)
    [ -n "$srv_pid" ] && break
    sleep 0.05
  done
  pids+=("$srv_pid")
  for _ in $(seq 600); do
    srv_url=$(grep -m1 '^ws://' "$out/$name.out" || true)
    [ -n "$srv_url" ] && return 0
    kill -0 "$srv_pid" 2>/dev/null || { cat "$out/$name.log" >&2; return 1; }
    sleep 0.1
  done
  return 1
}
# The servers hold nothing worth a clean stop (temporary worlds).
stop() { kill -9 "$1" 2>/dev/null || true; }

# Runs the clients against the URLs (comma-separated); prints the figures and the CPU per
# 1 000 confirmed ops of each process in $watch.
bench() {
  local name=$1 urls=$2 before=() after=()
  for p in $watch; do before+=("$(cpu_s "$p")"); done
  LOAM_BENCH_URL=$urls "$bin" "$clients" "$rate" "$seconds" "$spacing" >"$out/$name.json" 2>"$out/$name.bench.log" || true
  for p in $watch; do after+=("$(cpu_s "$p")"); done
  python3 - "$out/$name.json" "$name" "${before[*]}" "${after[*]}" "$seconds" "$watch_names" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().strip().splitlines()
name, before, after, seconds, names = sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), float(sys.argv[5]), sys.argv[6].split()
if not lines:
    print(f"{name}: no result"); sys.exit(0)
r = json.loads(lines[-1])
if "error" in r:
    print(f"{name}: failed: {r['error']}"); sys.exit(0)
# Confirmed ops of the whole run: the measured rate over the window and the 1 s warm-up.
ops = r["ops_per_s"] * (seconds + 1.0)
cpu = ", ".join(f"{n} {(float(a) - float(b)) / ops * 1000:.3f}" for n, a, b in zip(names, after, before))
print(f"{name}: {r['ops_per_s']:.0f} ops/s, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, "
      f"converged {r['converged']}, dropped {r['dropped']}, lost {r['lost_ops']}; "
      f"CPU s per 1000 ops: {cpu}")
PY
}

# 1. One process on a world file.
serve single
watch=$srv_pid; watch_names="server"
bench single "$srv_url"
stop "$srv_pid"

# 2. NATS on loopback.
nats_port=$(free_port)
nats-server -js -a 127.0.0.1 -p "$nats_port" -sd "$out/js" >"$out/nats.log" 2>&1 &
nats_pid=$!
pids+=("$nats_pid")
sleep 0.5
nats="nats://127.0.0.1:$nats_port"

# One node.
serve one LOAM_BENCH_NATS="$nats" LOAM_BENCH_WORLD_ID=one LOAM_BENCH_NODE_ID=1
watch="$srv_pid $nats_pid"; watch_names="node nats"
bench one-node "$srv_url"
stop "$srv_pid"

# Two nodes, the clients split over them.
serve two1 LOAM_BENCH_NATS="$nats" LOAM_BENCH_WORLD_ID=two LOAM_BENCH_NODE_ID=1 LOAM_BENCH_FILE="$out/node1.loam"
p1=$srv_pid; u1=$srv_url
serve two2 LOAM_BENCH_NATS="$nats" LOAM_BENCH_WORLD_ID=two LOAM_BENCH_NODE_ID=2 LOAM_BENCH_SNAPSHOT_EVERY=5
p2=$srv_pid; u2=$srv_url
watch="$p1 $p2 $nats_pid"; watch_names="node1 node2 nats"
bench two-nodes "$u1,$u2"

# Catch-up: node 1 is killed, node 2 takes CATCHUP_S s of load alone, node 1 comes back on
# its world file and replays the stream's tail after it.
stop "$p1"
watch="$p2"; watch_names="node2"
seconds_was=$seconds
seconds=$catchup_s
bench catch-up-load "$u2"
seconds=$seconds_was
serve again LOAM_BENCH_NATS="$nats" LOAM_BENCH_WORLD_ID=two LOAM_BENCH_NODE_ID=1 LOAM_BENCH_FILE="$out/node1.loam"
for _ in $(seq 6000); do
  grep -q "caught up with the world's stream" "$out/again.log" && break
  sleep 0.1
done
echo "catch-up of node 1 on its file: $(grep -o "caught up with the world's stream.*" "$out/again.log" || echo never)"
echo "before it, node 1 read the stream's blocks again: $(grep -o "read the blocks of the stream.*" "$out/again.log" || echo never)"
stop "$srv_pid"

# A new node 3 without a file starts from the snapshot node 2 put (every 5 s) and replays
# only the stream after it (nothing, if the last put came after the load's last op).
# It starts 3 s into 6 s of load on node 2, so the stream goes on past the last snapshot.
seconds_was=$seconds
seconds=6
bench fresh-load "$u2" >"$out/fresh-load.txt" &
load_pid=$!
seconds=$seconds_was
sleep 3
t0=$(date +%s.%N)
serve fresh LOAM_BENCH_NATS="$nats" LOAM_BENCH_WORLD_ID=two LOAM_BENCH_NODE_ID=3
t1=$(date +%s.%N)
wait "$load_pid"
cat "$out/fresh-load.txt"
for _ in $(seq 600); do
  grep -q "caught up with the world's stream" "$out/fresh.log" && break
  sleep 0.1
done
echo "new node 3 served after $(python3 -c "print(f'{$t1 - $t0:.2f}')") s (process start to listening: snapshot, blocks, world file loaded)"
echo "new node 3: $(grep -o "started from the world's snapshot.*" "$out/fresh.log" || echo "no snapshot taken")"
echo "new node 3 read the stream's blocks: $(grep -o "read the blocks of the stream.*" "$out/fresh.log" || echo never)"
echo "new node 3 caught up: $(grep -o "caught up with the world's stream.*" "$out/fresh.log" || echo "nothing to catch up")"
stop "$srv_pid"
stop "$p2"
