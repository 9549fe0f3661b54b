#!/usr/bin/env bash
# Two editors through a server crash, in a virtual X server (Xvfb, lavapipe): A joins and
# captures the mouse (its tool aims at the ground); B joins full screen and, before editing
# anything, shows a round-trip time, "players 2" and A's tool. The server is killed (-9):
# B shows OFFLINE, "players 1" and no round-trip time. The server restarts on the same world
# and port: both reconnect, and B shows A's tool again without A moving (A's client sends
# its last presence again). Usage: tools/editor_reconnect_check.sh LOAM OUT
set -euo pipefail
loam=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$(dirname "$0")/.."
. tools/editor_check_lib.sh
start_xvfb
start_server "$loam" "$out"
trap 'kill $xvfb $server $(cat "$out"/*.pid 2>/dev/null) 2>/dev/null || true' EXIT

wa=$(joined_window "$loam" "$out" a 640x360)
xdotool windowmove "$wa" 0 0
xdotool windowfocus "$wa"
xdotool mousemove 320 180 click 1 # capture: A's tool aims at the screen centre
sleep 10
wb=$(joined_window "$loam" "$out" b 1280x720)
xdotool windowmove "$wb" 0 0
sleep 15
import -window root "$out/b-1-joined.png"
kill -9 $server
wait $server 2>/dev/null || true
sleep 40 # a frame takes seconds with two debug editors on software rendering
import -window root "$out/b-2-offline.png"
"$loam" serve --world "$out/w.loam" --listen "127.0.0.1:$port" >"$out/serve-2.log" 2>&1 &
server=$!
sleep 40
import -window root "$out/b-3-reconnected.png"
for w in "$wa" "$wb"; do
  xdotool windowfocus "$w"
  chord q
done
for p in $(cat "$out"/*.pid); do
  for _ in $(seq 120); do kill -0 "$p" 2>/dev/null || break; sleep 1; done
done
kill -INT $server
wait $server || true
cat "$out/serve.log" "$out/serve-2.log"
