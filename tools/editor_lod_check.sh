#!/usr/bin/env bash
# Opens the editor in a virtual X server (Xvfb, Mesa's lavapipe) with a 2 km view (given: on
# a software renderer the editor would start with 384 m)
# (levels of detail) from examples/horizon.json (looking toward a pit dug 1.4 km away), waits for the far chunks, takes a screenshot, toggles the level tint
# (L) and takes another. Usage: tools/editor_lod_check.sh LOAM_BINARY OUT_DIR [WAIT_S]
set -euo pipefail
loam=$(realpath "$1")
out=$2
wait_s=${3:-120}
rm -rf "$out"
mkdir -p "$out"
cd "$(dirname "$0")/.."
. tools/editor_check_lib.sh
start_xvfb
trap 'kill $xvfb 2>/dev/null || true' EXIT

"$loam" edit "$out/w.loam" --session examples/horizon.json --size 960x540 --view-distance 2048 \
  >"$out/edit.log" 2>&1 &
pid=$!
wid=$(editor_window $pid "$out/edit.log")
sleep "$wait_s"
import -window root "$out/view.png"
xdotool key l
sleep 15
import -window root "$out/tint.png"
quit_editor $pid "$out/edit.log"
