# Heavily edits two places: paint ops r64 on a 64 m grid over +-R around A=(0,0) and B=(BX,BX). Pipelined, window 16.
# usage: edit_paint.py PORT [R=512] [BX=3000]
from lc import *
import sys
port = sys.argv[1]; R = float(sys.argv[2]) if len(sys.argv) > 2 else 512; BX = float(sys.argv[3]) if len(sys.argv) > 3 else 3000
c = C(f"ws://127.0.0.1:{port}/ws"); c.send(hello("editor", radius=0)); c.drain(1.5, quiet=True)
ops = []
for cx, cz in ((0, 0), (BX, BX)):
    g = int(R // 64)
    for i in range(-g, g + 1):
        for j in range(-g, g + 1):
            ops.append({"kind": "paint", "center": [cx + i * 64, 50, cz + j * 64], "radius": 64, "material": 3, "threshold": 0.01})
sent = 0; acked = 0; refused = 0; t0 = time.time()
while acked + refused < len(ops):
    while sent < len(ops) and sent - acked - refused < 16:
        sent += 1; c.send(opmsg(sent, ops[sent - 1]))
    m = c.recv(timeout=120)
    if "op" in m and m["op"]["author"] is not None and m["op"]["op_id"] <= sent: acked += 1
    elif "op_refused" in m: refused += 1; print(m)
    elif "disconnect" in m: print(m); break
print(f"{len(ops)} ops: acked {acked} refused {refused} in {time.time()-t0:.1f}s")
c.close()
