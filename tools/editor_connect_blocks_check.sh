#!/usr/bin/env bash
# Blocks over the network in the editor, in a virtual X server (Xvfb, lavapipe): `loam
# serve` on a new world; editor A joins with --connect, switches to the block tool, places
# four blocks, undoes two (Ctrl+Z twice: each undo is a block op in the server's order) and
# redoes one (Ctrl+Y); A quits; editor B joins and must hold the three (its snapshot).
# Screenshots of both; fails unless the server's world file holds the three blocks. Usage: tools/editor_connect_blocks_check.sh LOAM OUT
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

build() {
  xdotool key t # terrain → blocks
  sleep 8
  xdotool mousemove 400 225 click 1 # capture (places nothing)
  sleep 8
  for _ in 1 2 3 4; do
    xdotool click 1
    sleep 8
  done
  sleep 10
  import -window root "$out/a-placed.png"
  chord z
  sleep 8
  chord z
  sleep 10
  import -window root "$out/a-undone.png"
  chord y
  sleep 10
}

look() { sleep 20; }

joined_session "$loam" "$out" a build
joined_session "$loam" "$out" b look
kill -INT $server
wait $server || true
cat "$out/serve.log"
"$loam" world info "$out/w.loam" | tee "$out/info"
grep -q "blocks      3 held" "$out/info" || {
  echo "expected the server's world to hold 3 blocks" >&2
  exit 1
}
