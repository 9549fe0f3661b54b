#!/usr/bin/env bash
# The mesher switch with levels of detail, in the editor (Xvfb, Mesa's lavapipe): opens
# examples/horizon.json (a camera looking out over the terrain) with a 700 m view (four levels) and the level tint (L), then presses
# M three times (mc → mc33 → sn → dc). The editor runs with --check-seams, which prints, each
# time the whole view is built and shown with a new mesher, the open edges inside the view
# and the meshers that drew it. Takes a screenshot of each (OUT_DIR/mc.png … dc.png) and fails
# unless every mesher's view was complete, drawn by that mesher at every level (MC33: by
# Marching Cubes, its level seams are Transvoxel's) and without an open edge, and the editor
# quits cleanly. Usage: tools/editor_mesher_check.sh LOAM_BINARY OUT_DIR [WAIT_S]
# (WAIT_S: the longest wait for one mesher's view, default 600 s for a debug build.)
set -euo pipefail
loam=$(realpath "$1")
out=$2
wait_s=${3:-600}
rm -rf "$out"
mkdir -p "$out"
cd "$(dirname "$0")/.."
. tools/editor_check_lib.sh
start_xvfb
trap 'kill $xvfb 2>/dev/null || true' EXIT

"$loam" edit "$out/w.loam" --session examples/horizon.json --size 960x540 \
  --view-distance 700 --lod-fade 0 --check-seams >"$out/edit.log" 2>&1 &
pid=$!
wid=$(editor_window $pid "$out/edit.log")
xdotool key l

# Waits for the seam line of mesher $1 in the log; prints it.
seams() {
  for _ in $(seq "$wait_s"); do
    line=$(grep -a "^seams: mesher $1," "$out/edit.log" || true)
    if [ -n "$line" ]; then
      echo "$line"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "the editor stopped" >&2; cat "$out/edit.log" >&2; return 1; }
    sleep 1
  done
  echo "no complete view with mesher $1 within ${wait_s} s" >&2
  return 1
}

lines=()
for m in mc mc33 sn dc; do
  if [ "$m" != mc ]; then
    xdotool key m
  fi
  lines+=("$(seams "$m")")
  sleep 8 # a frame or two with the tint, then the picture
  import -window root "$out/$m.png"
done
quit_editor $pid "$out/edit.log"
printf '%s\n' "${lines[@]}"

fail=0
for line in "${lines[@]}"; do
  m=$(sed -E 's/^seams: mesher ([a-z0-9]+),.*/\1/' <<<"$line")
  want=$m
  [ "$m" = mc33 ] && want=mc
  grep -q "drawn by \[$want\]: open edges inside the view 0," <<<"$line" || {
    echo "FAIL: $line (want drawn by [$want], no open edge)" >&2
    fail=1
  }
  grep -q "of levels 0..=[1-9]" <<<"$line" || { echo "FAIL: one level only: $line" >&2; fail=1; }
done
[ "$fail" = 0 ] && echo "editor mesher check passed: $out/{mc,mc33,sn,dc}.png"
exit "$fail"
