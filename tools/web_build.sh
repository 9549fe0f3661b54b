#!/usr/bin/env bash
# Builds Loam's browser editor (crates/web) into OUT_DIR: index.html, loam.js, and pkg/ (the
# wasm32 module and its wasm-bindgen glue). `loam serve --world W --web OUT_DIR` serves it.
#
#   tools/web_build.sh OUT_DIR [--release]
#
# Installs what it lacks: the wasm32-unknown-unknown target (rustup) and wasm-bindgen-cli at
# the version of the wasm-bindgen library in Cargo.lock (cargo install; a few minutes once).
# The build uses the workspace's dev profile (dependencies at opt-level 2), which builds in
# about half the time of --release; --release is smaller and faster in the page.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: tools/web_build.sh OUT_DIR [--release]}
PROFILE=debug
FLAGS=()
if [ "${2:-}" = "--release" ]; then
  PROFILE=release
  FLAGS=(--release)
fi
# A target folder of its own (inside the workspace's): the wasm32 build's host-side build
# scripts and proc macros resolve other features than the native build's, and kept apart
# the two never rebuild each other's.
TARGET_DIR=${CARGO_TARGET_DIR:-target}/web

if ! rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
# The CLI must be the library's version exactly (its output is matched to the library).
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if [ -z "$WB_VERSION" ]; then
  echo "web_build: no wasm-bindgen in Cargo.lock" >&2
  exit 1
fi
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $WB_VERSION"; then
  echo "web_build: installing wasm-bindgen-cli $WB_VERSION"
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi

echo "web_build: building loam-web for wasm32-unknown-unknown ($PROFILE)"
CARGO_TARGET_DIR="$TARGET_DIR" cargo build --locked --target wasm32-unknown-unknown -p loam-web "${FLAGS[@]}"
WASM="$TARGET_DIR/wasm32-unknown-unknown/$PROFILE/loam_web.wasm"

rm -rf "$OUT"
mkdir -p "$OUT/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$OUT/pkg" "$WASM"
cp crates/web/page/index.html crates/web/page/loam.js "$OUT/"
echo "web_build: $OUT ($(du -sh "$OUT/pkg/loam_web_bg.wasm" | cut -f1) of wasm)"
