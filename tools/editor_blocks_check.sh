#!/usr/bin/env bash
# Drives the editor in a virtual X server (Xvfb, Mesa's lavapipe) as a person would:
# switches to the block tool, captures the mouse, places four blocks, undoes the last two
# (Ctrl+Z twice: block edits are in the undo order) and redoes one (Ctrl+Y), saves and quits
# with Ctrl+Q, then reopens the world and takes screenshots of both sessions. Prints `loam
# world info` after each, and fails unless the reopened world holds three blocks.
# Usage: tools/editor_blocks_check.sh LOAM_BINARY OUT_DIR
set -euo pipefail
loam=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$(dirname "$0")/.."
. tools/editor_check_lib.sh
start_xvfb
trap 'kill $xvfb 2>/dev/null || true' EXIT

session() { # $1: name; $2: what to do in the window
  "$loam" edit "$out/w.loam" --session examples/generated.json --size 800x450 \
    >"$out/$1.log" 2>&1 &
  local pid=$!
  local wid
  wid=$(editor_window $pid "$out/$1.log")
  $2 "$wid" "$1"
  import -window root "$out/$1.png"
  quit_editor $pid "$out/$1.log"
  "$loam" world info "$out/w.loam" | tee "$out/$1.info"
}

build() {
  local wid=$1
  # Frames take seconds under software rendering on a busy machine: wait between inputs
  # so that each lands in a frame of its own.
  xdotool key t # terrain → blocks
  sleep 8
  # Capture the mouse with the block tool on: the capturing click places nothing (it once
  # placed a block when shorter than a frame).
  xdotool mousemove 400 225 click 1
  sleep 8
  for _ in 1 2 3 4; do
    xdotool click 1
    sleep 8
  done
  import -window root "$out/$2-placed.png"
  chord z
  sleep 8
  chord z
  sleep 8
  import -window root "$out/$2-undone.png"
  chord y
  sleep 8
  chord s
  sleep 8
}

look() {
  sleep 10
}

session first build
session second look
# Four placing clicks (one capturing click), two undone, one redone: three blocks, held on
# their pad.
grep -q "blocks      3 held, 0 pieces" "$out/second.info" || {
  echo "expected 3 held blocks and no pieces after reopening" >&2
  exit 1
}
