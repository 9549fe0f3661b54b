# Sends a tiny op (dig r 0.5 in the air far away) every 100 ms for SECS s and measures its round trip.
# usage: pinger.py PORT SECS [LABEL]
from lc import *
import sys, threading
port, secs = sys.argv[1], float(sys.argv[2]); label = sys.argv[3] if len(sys.argv) > 3 else ""
tj = time.time(); c = C(f"ws://127.0.0.1:{port}/ws"); c.send(hello("pinger", radius=0, pos=(-5000, 300, -5000)))
while True:
    m = c.recv(timeout=120)
    if "catch_up" in m and m["catch_up"]["done"]: break
print(f"{label} pinger: joined in {time.time()-tj:.1f}s", flush=True)
sent = {}; rtt = []; t0 = time.time()
def reader():
    while True:
        try: m = c.recv(timeout=60)
        except Exception: return
        if "op" in m and m["op"]["op_id"] in sent: rtt.append((sent[m["op"]["op_id"]] - t0, time.time() - sent.pop(m["op"]["op_id"])))
threading.Thread(target=reader, daemon=True).start()
i = 0
while time.time() - t0 < secs:
    i += 1; sent[i] = time.time(); c.send(opmsg(i, sphere(c=(-5000 + (i % 50), 300, -5000), r=0.5))); time.sleep(0.1)
time.sleep(3)
r = sorted(x[1] for x in rtt)
q = lambda p: r[min(len(r) - 1, int(p * len(r)))] * 1000
print(f"{label} pinger: {len(r)}/{i} acked, p50 {q(.5):.0f} ms p99 {q(.99):.0f} ms max {r[-1]*1000:.0f} ms; slow (>500ms) at t=" +
      ",".join(f"{t:.1f}({d*1000:.0f})" for t, d in rtt if d > 0.5)[:600], flush=True)
c.close()
