#!/usr/bin/env bash
# Two editors on one server, in a virtual X server (Xvfb, lavapipe): `loam serve` on a new
# world; editor A joins with --connect and digs; A quits; editor B joins and must show A's
# crater (its snapshot). Screenshots of both. Usage: tools/editor_connect_check.sh LOAM OUT
set -euo pipefail
loam=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$(dirname "$0")/.."
. tools/editor_check_lib.sh
start_xvfb
start_server "$loam" "$out"
trap 'kill $xvfb $server 2>/dev/null || true' EXIT

editor() { # $1: name; $2: what to do
  RUST_LOG=${RUST_LOG:-info} "$loam" edit --connect "ws://127.0.0.1:$port/ws" --name "$1" \
    --size 800x450 >"$out/$1.log" 2>&1 &
  local pid=$!
  editor_window $pid "$out/$1.log" >/dev/null
  $2
  import -window root "$out/$1.png"
  quit_editor $pid "$out/$1.log"
}

dig() {
  xdotool mousemove 400 225 click 1 # capture
  sleep 8
  for _ in 1 2 3; do
    xdotool click 1 # dig
    sleep 8
  done
  for i in 1 2 3; do
    sleep 10
    import -window root "$out/a-$i.png"
  done
}

look() { sleep 10; }

editor a dig
editor b look
kill -INT $server
wait $server || true
cat "$out/serve.log"
