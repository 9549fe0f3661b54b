#!/usr/bin/env bash
# Drives the editor in a virtual X server (Xvfb, Mesa's lavapipe) as a person would: captures
# the mouse, switches to the block tool, places blocks, saves and quits with Ctrl+Q, then
# reopens the world and takes screenshots of both sessions. Prints `loam world info` after
# each. Usage: tools/editor_blocks_check.sh LOAM_BINARY OUT_DIR
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
trap 'kill $xvfb 2>/dev/null || true' EXIT
export DISPLAY=$display
sleep 2

# Ctrl+KEY held across frames (a frame can take seconds here; a chord pressed and released
# within one frame would reach the app with Ctrl already up).
chord() {
  xdotool keydown ctrl
  sleep 6
  xdotool key "$1"
  sleep 6
  xdotool keyup ctrl
}

session() { # $1: name; $2: what to do in the window
  "$loam" edit "$out/w.loam" --session examples/generated.json --size 800x450 \
    >"$out/$1.log" 2>&1 &
  local pid=$!
  local wid=""
  for _ in $(seq 180); do
    wid=$(xdotool search --name "Loam" 2>/dev/null | head -1 || true)
    [ -n "$wid" ] && break
    sleep 1
  done
  [ -n "$wid" ] || { echo "no editor window"; cat "$out/$1.log"; exit 1; }
  sleep 40 # chunks load and mesh (debug build, software rendering)
  # No window manager: give the window the focus, then send real (XTEST) input.
  xdotool windowfocus "$wid" 2>/dev/null || true
  $2 "$wid"
  import -window root "$out/$1.png"
  chord q
  for _ in $(seq 120); do
    kill -0 $pid 2>/dev/null || break
    sleep 1
  done
  if kill -0 $pid 2>/dev/null; then
    echo "the editor did not quit on Ctrl+Q"
    kill $pid
    exit 1
  fi
  wait $pid || { echo "the editor failed"; tail -20 "$out/$1.log"; exit 1; }
  "$loam" world info "$out/w.loam" | tee "$out/$1.info"
}

build() {
  local wid=$1
  # Frames take seconds under software rendering on a busy machine: wait between inputs
  # so that each lands in a frame of its own.
  xdotool mousemove 400 225 click 1 # capture the mouse
  sleep 8
  xdotool key t # terrain → blocks
  sleep 8
  for _ in 1 2 3 4; do
    xdotool click 1
    sleep 8
  done
  chord s
  sleep 8
}

look() {
  sleep 10
}

session first build
session second look
