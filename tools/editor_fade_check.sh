#!/usr/bin/env bash
# Level-of-detail fades in the editor (Xvfb, Mesa's lavapipe): opens examples/horizon.json with
# a long fade (--lod-fade 20) so that a debug build at a frame or two a second catches it
# (virtual time advances at most 0.25 s a frame), takes a screenshot while the first chunks
# are still dithering in through the terrain shader's screen-door window and another once
# their fades have ended. Fails unless the near terrain (the bottom of the picture) has
# clearly more 4 x 4 dither texture (mean absolute Laplacian of the grey image) in the first
# picture than in the second, and the editor exits cleanly. The cross-fade of a level change
# (old and new chunks through complementary windows) is unit-tested in
# crates/bevy/tests/plugin.rs. Usage: tools/editor_fade_check.sh LOAM_BINARY OUT_DIR
set -euo pipefail
loam=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$(dirname "$0")/.."
. tools/editor_check_lib.sh
start_xvfb
trap 'kill $xvfb 2>/dev/null || true' EXIT

"$loam" edit "$out/w.loam" --session examples/horizon.json --size 960x540 --view-distance 2048 \
  --lod-fade 20 >"$out/edit.log" 2>&1 &
pid=$!
wid=$(editor_window $pid "$out/edit.log")
import -window root "$out/fading.png"
sleep 150
import -window root "$out/faded.png"
quit_editor $pid "$out/edit.log"

texture() {
  convert "$out/$1.png" -crop 960x150+0+390 -colorspace gray \
    -morphology Convolve Laplacian:0 -format "%[fx:mean]" info:
}
f=$(texture fading)
a=$(texture faded)
echo "dither texture of the near terrain: fading $f, faded $a"
python3 - "$f" "$a" <<'PY'
import sys
f, a = map(float, sys.argv[1:])
assert f > 1.5 * a, f"no fade seen: fading {f}, faded {a}"
PY
echo "editor fade check passed: $out"
