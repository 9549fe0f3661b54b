#!/usr/bin/env python3
"""Times Loam's meshers on the scans of data/volumes side by side with the peers of
compare_volumes.py (scikit-image Lewiner, PyMCubes, VTK vtkFlyingEdges3D), one thread, best of
--runs, interleaved --rounds times so that load on a shared machine hits everyone alike.

Loam is timed by the loam-bench example `scan_times`, which meshes as `loam mesh-volume` does
(fresh buffer, normals, scaling) without building the Bevy-linked `loam` binary. "loam X" is
the best first call of --runs processes; "(warm)" the best of --runs further calls in one
process, fresh buffer each (how compare_volumes.py times Loam, `loam mesh-volume --runs`, and
the peers):

    cargo build --release -p loam-bench --example scan_times
    python tools/scan_times.py --bin $CARGO_TARGET_DIR/release/examples/scan_times

`--volume SIDECAR` (repeatable) times those volumes instead, for example CT phantoms of any
size and sample type from tools/ct_phantom.py.
"""

import argparse
import json
import subprocess
from pathlib import Path

import compare_volumes as cv

ROOT = Path(__file__).resolve().parent.parent
SCANS = {"head": "head_mr_48x62x42_uint8.json", "hydrogen": "hydrogen_orbital_64x64x64_float32le.json"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", type=Path, required=True, help="the scan_times example binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--meshers", default="mc", help="comma-separated Loam meshers")
    ap.add_argument("--volume", type=Path, action="append", default=[],
                    help="a volume's JSON sidecar to time instead of data/volumes' scans "
                         "(repeatable; e.g. phantoms from tools/ct_phantom.py)")
    ap.add_argument("--peers", default="skimage,pymcubes,vtk",
                    help="comma-separated peers: skimage, pymcubes, vtk")
    args = ap.parse_args()
    chosen = set(args.peers.split(","))
    # Scan name → (sidecar, what the example is given to name it).
    scans = ({v.stem: (v.resolve(), str(v.resolve())) for v in args.volume} if args.volume
             else {name: (ROOT / "data/volumes" / sidecar, name)
                   for name, sidecar in SCANS.items()})
    best = {}
    for _ in range(args.rounds):
        for scan, (sidecar, arg) in scans.items():
            _, vol, spacing, iso = cv.load_volume(sidecar)
            peers = {}
            if "skimage" in chosen:
                peers["skimage lewiner"] = cv.peer_skimage(vol, spacing, iso, "lewiner")
            if "pymcubes" in chosen:
                peers["PyMCubes"] = cv.peer_pymcubes(vol, spacing, iso)
            if "vtk" in chosen:
                peers["vtk FlyingEdges3D"] = cv.peer_vtk(vol, spacing, iso, "vtkFlyingEdges3D")
            for label, (run, _) in peers.items():
                _, s = cv.best_of(run, args.runs)
                key = (scan, label)
                best[key] = min(best.get(key, float("inf")), s)
            for m in args.meshers.split(","):
                for _ in range(args.runs):
                    out = subprocess.run([str(args.bin), str(args.runs), m, arg], check=True,
                                         capture_output=True, text=True).stdout
                    r = json.loads(out)
                    for label, field in [("", "cold"), (" (warm)", "seconds"),
                                         (" (reused buffer)", "seconds_reused_buffer")]:
                        key = (scan, f"loam {m}{label}")
                        best[key] = min(best.get(key, float("inf")), r[field])
    for scan in scans:
        print(f"{scan}:")
        for (s, label), secs in best.items():
            if s == scan:
                print(f"  {label:32} {secs * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
