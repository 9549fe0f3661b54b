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
export WGPU_BACKEND=vulkan
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 &
xvfb=$!
port=$((20000 + RANDOM % 20000))
"$loam" world new "$out/w.loam" --session examples/generated.json
"$loam" serve --world "$out/w.loam" --listen "127.0.0.1:$port" >"$out/serve.log" 2>&1 &
server=$!
trap 'kill $xvfb $server 2>/dev/null || true' EXIT
export DISPLAY=$display
sleep 3

chord() {
  xdotool keydown ctrl
  sleep 6
  xdotool key "$1"
  sleep 6
  xdotool keyup ctrl
}

editor() { # $1: name; $2: what to do
  RUST_LOG=${RUST_LOG:-info} "$loam" edit --connect "ws://127.0.0.1:$port/ws" --name "$1" --size 800x450 \
    >"$out/$1.log" 2>&1 &
  local pid=$!
  local wid=""
  for _ in $(seq 180); do
    wid=$(xdotool search --name "Loam" 2>/dev/null | head -1 || true)
    [ -n "$wid" ] && break
    sleep 1
  done
  [ -n "$wid" ] || { echo "no editor window"; cat "$out/$1.log"; exit 1; }
  sleep 40
  xdotool windowfocus "$wid" 2>/dev/null || true
  $2
  import -window root "$out/$1.png"
  chord q
  for _ in $(seq 120); do
    kill -0 $pid 2>/dev/null || break
    sleep 1
  done
  kill -0 $pid 2>/dev/null && { echo "the editor did not quit"; kill $pid; exit 1; }
  wait $pid || { echo "the editor failed"; tail -20 "$out/$1.log"; exit 1; }
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
