# Shared by the headless editor checks (tools/editor_*_check.sh): a virtual X server with
# Mesa's lavapipe, and driving an editor window with xdotool. Source it; it defines:
#   start_xvfb            starts Xvfb on a free-ish display, exports DISPLAY (pid in $xvfb)
#   chord KEY             Ctrl+KEY held across frames
#   editor_window PID LOG [TITLE]
#                         waits for the editor's window (its title has TITLE, "Loam" if
#                         none), focuses it, prints its id
#   quit_editor PID LOG   Ctrl+Q, then waits for the editor to exit cleanly
#   start_server LOAM OUT a new world OUT/w.loam served on a random loopback port (in $port,
#                         pid in $server, log in OUT/serve.log)
#   joined_window LOAM OUT NAME SIZE
#                         an editor joined to that server as NAME in a window of SIZE, left
#                         running; prints its window id once it has loaded (call it in
#                         $(...): its pid is in OUT/NAME.pid)
#   joined_session LOAM OUT NAME ACTION
#                         an editor joined to that server as NAME: runs ACTION in its window,
#                         screenshots OUT/NAME.png, quits (log in OUT/NAME.log)

start_xvfb() {
  export WGPU_BACKEND=vulkan
  local display=:$((90 + RANDOM % 100))
  Xvfb "$display" -screen 0 1280x720x24 >/dev/null 2>&1 &
  xvfb=$!
  export DISPLAY=$display
  sleep 2
}

# A frame can take seconds here; a chord pressed and released within one frame would reach
# the app with Ctrl already up.
chord() {
  xdotool keydown ctrl
  sleep 6
  xdotool key "$1"
  sleep 6
  xdotool keyup ctrl
}

editor_window() { # PID LOG [TITLE]: the window whose title has TITLE ("Loam" if none)
  local wid=""
  for _ in $(seq 180); do
    wid=$(xdotool search --name "${3:-Loam}" 2>/dev/null | head -1 || true)
    [ -n "$wid" ] && break
    sleep 1
  done
  [ -n "$wid" ] || { echo "no editor window ${3:-}" >&2; cat "$2" >&2; return 1; }
  sleep 40 # chunks load and mesh (debug build, software rendering)
  # No window manager: give the window the focus, then send real (XTEST) input.
  xdotool windowfocus "$wid" 2>/dev/null || true
  echo "$wid"
}

quit_editor() {
  chord q
  for _ in $(seq 120); do
    kill -0 "$1" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$1" 2>/dev/null; then
    echo "the editor did not quit on Ctrl+Q" >&2
    kill "$1"
    return 1
  fi
  wait "$1" || { echo "the editor failed" >&2; tail -20 "$2" >&2; return 1; }
}

start_server() {
  port=$((20000 + RANDOM % 20000))
  "$1" world new "$2/w.loam" --session examples/generated.json
  "$1" serve --world "$2/w.loam" --listen "127.0.0.1:$port" >"$2/serve.log" 2>&1 &
  server=$!
  sleep 3
}

joined_session() {
  RUST_LOG=${RUST_LOG:-info} "$1" edit --connect "ws://127.0.0.1:$port/ws" --name "$3" \
    --size 800x450 >"$2/$3.log" 2>&1 &
  local pid=$!
  editor_window $pid "$2/$3.log" >/dev/null
  $4
  import -window root "$2/$3.png"
  quit_editor $pid "$2/$3.log"
}

joined_window() {
  RUST_LOG=${RUST_LOG:-info} "$1" edit --connect "ws://127.0.0.1:$port/ws" --name "$3" \
    --size "$4" >"$2/$3.log" 2>&1 &
  echo $! >"$2/$3.pid"
  editor_window "$(cat "$2/$3.pid")" "$2/$3.log" " $3 @ ws:"
}
