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

joined_session "$loam" "$out" a dig
joined_session "$loam" "$out" b look
kill -INT $server
wait $server || true
cat "$out/serve.log"
