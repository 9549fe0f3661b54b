#!/usr/bin/env bash
# Loam's browser editor, checked end to end in headless Chromium (crates/web):
#   1. builds the bundle (tools/web_build.sh; or takes WEB_BUNDLE=DIR already built);
#   2. `loam serve --web BUNDLE` on a free loopback port, on a new world;
#   3. tools/web_check.mjs drives the page with Playwright (playwright-core, Debian's
#      chromium): the page shows terrain laid out as the native headless render of the same
#      session; a click and a held left button dig (the pixels at the crosshair change); the
#      world the page keeps, written to a file, has the page's field hash in `loam world
#      info` (a native replay of its ops); Ctrl+Z and Ctrl+Y undo and redo it; a reload
#      keeps the edits; a damaged saved world
#      gives a message and a fresh world, the damaged bytes kept aside; `?connect=` says
#      that joining from a browser is not built yet.
# Screenshots and logs stay in OUT_DIR.
#
#   tools/web_check.sh LOAM_BINARY OUT_DIR
#
# Installs Debian's chromium and npm's playwright-core (in ~/.cache/loam-npm) if missing.
# Exits 0 only if every check passed.
set -euo pipefail
loam=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
NPM_DIR="$HOME/.cache/loam-npm"
if [ ! -d "$NPM_DIR/node_modules/playwright-core" ]; then
  mkdir -p "$NPM_DIR"
  npm install --silent --prefix "$NPM_DIR" playwright-core@1
fi

bundle=${WEB_BUNDLE:-}
if [ -z "$bundle" ]; then
  bundle="$out/bundle"
  tools/web_build.sh "$bundle"
fi
bundle=$(realpath "$bundle")

# The native headless render of the session a new page world gets, from the same view.
"$loam" render examples/generated.json --without-ops --size 1280x720 --out "$out/native.png" \
  >"$out/native-render.log" 2>&1

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
"$loam" world new "$out/served.loam" >/dev/null
"$loam" serve --world "$out/served.loam" --listen "127.0.0.1:$port" --web "$bundle" \
  >"$out/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  grep -q "browser editor" "$out/serve.log" 2>/dev/null && break
  sleep 0.1
done

NODE_PATH="$NPM_DIR/node_modules" node tools/web_check.cjs "http://127.0.0.1:$port/" "$out" "$loam"
