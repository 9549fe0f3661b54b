# A client jumps its viewer (radius RADIUS) between A=(0,60,0) and B=(BX,60,BX) at RATE moves/s for SECS s,
# reading everything; reports bytes/s received per second, catch-ups completed, and whether the final viewer
# position's region is the one of the last CatchUp. usage: jumper.py PORT RATE SECS [BX=3000] [RADIUS=512] [NAME]
from lc import *
import sys, threading, math
port, rate, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
BX = float(sys.argv[4]) if len(sys.argv) > 4 else 3000; RAD = float(sys.argv[5]) if len(sys.argv) > 5 else 512
name = sys.argv[6] if len(sys.argv) > 6 else "jumper"
A = [0.0, 60.0, 0.0]; B = [BX, 60.0, BX]
def region(p, r=RAD, margin=16.0):  # region_for, voxel 1 m, bricks 32 m
    return {"min": [math.floor((c - r - margin) / 32) for c in p], "max": [math.floor((c + r + margin) / 32) for c in p]}
c = C(f"ws://127.0.0.1:{port}/ws"); c.send(hello(name, radius=RAD, pos=A))
st = {"bytes": 0, "n": 0, "done": 0, "last_region": None, "last": None, "per_s": {}, "first": None, "end": None, "cu_bytes": 0}
t0 = time.time()
def reader():
    while True:
        try: b = c.ws.recv(timeout=60)
        except Exception as e: st["end"] = repr(e)[:200]; return
        now = time.time(); s = int(now - t0)
        st["bytes"] += len(b); st["n"] += 1; st["per_s"][s] = st["per_s"].get(s, 0) + len(b)
        m = up(b); k = next(iter(m))
        if k == "catch_up":
            st["cu_bytes"] += len(b)
            if m[k]["done"]:
                st["done"] += 1; st["last_region"] = m[k]["region"]; st["last_t"] = now
        elif k in ("disconnect", "refused"): print("<-", m, flush=True)
threading.Thread(target=reader, daemon=True).start()
time.sleep(3)  # join snapshot
print(f"join: {st['bytes']/1e6:.1f} MB, {st['done']} catch-ups", flush=True)
b0 = st["bytes"]; d0 = st["done"]; cub0 = st["cu_bytes"]
ts = time.time(); i = 0; p = A
while time.time() - ts < secs:
    i += 1; p = B if i % 2 else A
    try: c.send({"viewer": {"position": p, "radius": RAD}})
    except Exception as e: print("send failed", repr(e)); break
    time.sleep(1 / rate)
dur = time.time() - ts
mid = st["bytes"]
print(f"sent {i} moves in {dur:.1f}s; during: {(mid-b0)/1e6/dur:.1f} MB/s, catch-ups done {st['done']-d0}; final viewer {'B' if p is B else 'A'}", flush=True)
tlast = time.time()
for _ in range(100):
    time.sleep(0.1)
    if st["last_region"] == region(p): break
ok = st["last_region"] == region(p)
print(f"final region served: {ok} ({time.time()-tlast:.1f}s after last move; last CatchUp region {st['last_region']}, expected {region(p)})")
print(f"total after: {(st['bytes']-b0)/1e6:.1f} MB in {time.time()-ts:.1f}s, catch-up bytes {(st['cu_bytes']-cub0)/1e6:.1f} MB; per-second MB:",
      " ".join(f"{st['per_s'].get(s,0)/1e6:.0f}" for s in range(int(ts - t0), int(time.time() - t0) + 1)), "ended:", st["end"], flush=True)
c.close()
