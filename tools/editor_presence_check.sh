#!/usr/bin/env bash
# Presence between two editors on one server, in a virtual X server (Xvfb, lavapipe): A joins,
# captures the mouse (its tool aims at the ground) and strafes aside; B joins at the start
# pose and must show A (a blue sphere where A is, a translucent blue sphere of A's tool where
# A aims, A's crater) and list A in its HUD; then A undoes its dig with Ctrl+Z and the
# crater goes from B's view. Usage: tools/editor_presence_check.sh LOAM OUT
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

# A: a small window; captures the mouse (its tool aims at the screen centre), strafes left
# and digs there.
wa=$(joined_window "$loam" "$out" a 640x360)
xdotool windowmove "$wa" 0 0
xdotool windowfocus "$wa"
xdotool mousemove 320 180 click 1
sleep 8
xdotool keydown a
sleep 3
xdotool keyup a
sleep 8
xdotool click 1
sleep 15
import -window root "$out/a.png"
# B: the whole screen, on top, at the start pose: A's crater, A's tool sphere on it and
# A's marker to the left; the HUD lists A.
wb=$(joined_window "$loam" "$out" b 1280x720)
xdotool windowmove "$wb" 0 0
sleep 20
import -window root "$out/b-1.png"
# A undoes its dig (keys go to the focused window, under B's).
xdotool windowfocus "$wa"
chord z
sleep 20
import -window root "$out/b-2-undone.png"
for w in "$wa" "$wb"; do
  xdotool windowfocus "$w"
  chord q
done
for p in $(cat "$out"/*.pid); do
  for _ in $(seq 120); do kill -0 "$p" 2>/dev/null || break; sleep 1; done
done
kill -INT $server
wait $server || true
cat "$out/serve.log"
