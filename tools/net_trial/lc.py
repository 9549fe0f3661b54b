"""Tiny Loam protocol helper (msgpack + websockets sync client, plus a raw-socket WS writer)."""
import msgpack, socket, os, base64, struct, time, sys
from websockets.sync.client import connect as wsconnect

PORT = int(os.environ.get("PORT", "7901"))
URL = f"ws://127.0.0.1:{PORT}/ws"

def pk(x): return msgpack.packb(x, use_bin_type=True)
def up(b): return msgpack.unpackb(b, raw=False, strict_map_key=False)

def hello(name="py", protocol=7, token=None, pos=(0.0, 60.0, 0.0), radius=32.0, resume=None):
    return {"hello": {"protocol": protocol, "name": name, "token": token,
                      "viewer": {"position": list(pos), "radius": radius}, "resume": resume}}

def entry(op, stroke=1, seq=0, v=1):
    return pk({"v": v, "seq": seq, "stroke": stroke, "op": op})

def sphere(c=(0.0, 58.0, 0.0), r=1.0, mode="dig", material=0, blend=0.0):
    return {"kind": "sphere", "mode": mode, "center": list(c), "radius": r, "material": material, "blend": blend}

def opmsg(op_id, op, stroke=None):
    return {"op": {"op_id": op_id, "entry": entry(op, stroke if stroke is not None else op_id)}}

def summarize(m):
    k = next(iter(m)) if isinstance(m, dict) else "?"
    v = m[k] if isinstance(m, dict) else m
    if k == "catch_up": return f"catch_up(done={v['done']}, bricks={len(v['bricks'])})"
    if k == "welcome": return f"welcome(client={v['client_id']}, seq={v['seq']}, resumed={v['resumed']}, last_op_id={v['last_op_id']})"
    if k == "op": return f"op(seq={v['seq']}, op_id={v['op_id']})"
    if k in ("block_catch_up",): return f"block_catch_up(done={v['done']})"
    if k == "patch": return f"patch(seq={v['seq']})"
    if k == "block_op": return f"block_op(seq={v['seq']}, op_id={v['op_id']}, author={v['author']})"
    s = repr(m)
    return s if len(s) < 400 else s[:400] + "..."

class C:
    def __init__(self, url=URL, **kw):
        self.ws = wsconnect(url, max_size=None, open_timeout=10, close_timeout=2, compression=None)
    def send(self, obj): self.ws.send(pk(obj) if not isinstance(obj, (bytes, bytearray)) else bytes(obj))
    def recv(self, timeout=5):
        b = self.ws.recv(timeout=timeout)
        if isinstance(b, str): return {"TEXT": b}
        return up(b)
    def drain(self, timeout=1.0, quiet=False, until=None):
        out = []
        t_end = time.time() + timeout
        while True:
            left = t_end - time.time()
            if left <= 0: break
            try:
                m = self.recv(timeout=left)
            except TimeoutError:
                break
            except Exception as e:
                out.append({"EXC": repr(e)}); 
                if not quiet: print("  <-", "EXC", repr(e))
                break
            out.append(m)
            if not quiet: print("  <-", summarize(m))
            if until and until(m): break
        return out
    def close(self):
        try: self.ws.close()
        except Exception as e: pass

def join(name="py", **kw):
    c = C()
    c.send(hello(name, **kw))
    msgs = c.drain(3, quiet=True, until=lambda m: "block_catch_up" in m and m["block_catch_up"]["done"] and False)
    return c, msgs

# --- raw websocket for malformed frames ---
def raw_connect(port=PORT, path="/ws"):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    req = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
    s.sendall(req.encode())
    resp = b""
    while b"\r\n\r\n" not in resp:
        d = s.recv(4096)
        if not d: break
        resp += d
    head, _, rest = resp.partition(b"\r\n\r\n")
    return s, head.decode(errors="replace"), rest

def frame(payload, opcode=2, fin=True, mask=True, length_override=None, rsv=0):
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload) if length_override is None else length_override
    hdr = bytes([b0])
    mbit = 0x80 if mask else 0
    if n < 126: hdr += bytes([mbit | n])
    elif n < 65536: hdr += bytes([mbit | 126]) + struct.pack(">H", n)
    else: hdr += bytes([mbit | 127]) + struct.pack(">Q", n)
    if mask:
        k = os.urandom(4)
        hdr += k
        payload = bytes(p ^ k[i % 4] for i, p in enumerate(payload)) if len(payload) < 1_000_000 else xor_big(payload, k)
    return hdr + payload

def xor_big(payload, k):
    import itertools
    n = len(payload)
    kk = (k * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(kk, "big")).to_bytes(n, "big")

def read_frames(s, timeout=3):
    """Parse server frames until close/timeout; returns list of (opcode, payload)."""
    s.settimeout(timeout)
    buf = b""; out = []
    t_end = time.time() + timeout
    while time.time() < t_end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        except OSError as e:
            out.append(("ERR", repr(e))); break
        if not d:
            out.append(("EOF", b"")); break
        buf += d
        while len(buf) >= 2:
            op = buf[0] & 0x0f; n = buf[1] & 0x7f; p = 2
            if n == 126:
                if len(buf) < 4: break
                n = struct.unpack(">H", buf[2:4])[0]; p = 4
            elif n == 127:
                if len(buf) < 10: break
                n = struct.unpack(">Q", buf[2:10])[0]; p = 10
            if len(buf) < p + n: break
            out.append((op, buf[p:p+n])); buf = buf[p+n:]
            if op == 8: return out
    return out

def show_frames(fr):
    for op, p in fr:
        if op == 2:
            try: print("  <- bin", summarize(up(p)))
            except Exception as e: print("  <- bin (undecodable)", p[:80])
        elif op == 8:
            code = struct.unpack(">H", p[:2])[0] if len(p) >= 2 else None
            print("  <- close", code, p[2:].decode(errors="replace"))
        else:
            print("  <-", op, p[:200] if isinstance(p, bytes) else p)
