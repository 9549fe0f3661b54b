#!/usr/bin/env python3
"""How long this machine's disk takes to make a 4 KiB write durable, the latency under every
acknowledged op of `loam serve` (WAL, synchronous = FULL: one fsync per group of ops).

Writes 4 KiB and fsyncs it in a loop for SECONDS (default 20) in DIR (default: the system's
temporary folder; use the folder the world file lives in) and prints the fsync percentiles
and the share of all fsync time spent in the slow ones. A server's p99 cannot be below the
stalls that cover more than 1% of its run: every op that arrives during a 200 ms stall waits
for it.

Usage: python3 tools/fsync_probe.py [SECONDS] [DIR]
"""

import os
import sys
import tempfile
import time


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    folder = sys.argv[2] if len(sys.argv) > 2 else tempfile.gettempdir()
    path = os.path.join(folder, f".loam-fsync-probe-{os.getpid()}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    buf = b"x" * 4096
    times = []
    offset = 0
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            os.pwrite(fd, buf, offset)
            offset = (offset + 4096) % (4 << 20)
            t = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - t)
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    n = len(times)
    total = sum(times)

    def q(p: float) -> float:
        return times[min(n - 1, int(p * n))] * 1000

    print(
        f"{n} fsyncs in {seconds:.0f} s: p50 {q(0.5):.2f} ms, p90 {q(0.9):.2f} ms, "
        f"p99 {q(0.99):.2f} ms, p99.9 {q(0.999):.2f} ms, max {times[-1] * 1000:.1f} ms"
    )
    for limit_ms in (2, 5, 10, 50):
        slow = [t for t in times if t * 1000 > limit_ms]
        print(
            f"over {limit_ms} ms: {len(slow)} fsyncs, {sum(slow):.3f} s "
            f"({100 * sum(slow) / seconds:.2f}% of the run)"
        )


if __name__ == "__main__":
    main()
