#!/usr/bin/env python3
"""Writes a synthetic CT head phantom as a raw volume with a JSON sidecar (the format of
data/volumes), for timing meshers on volumes of any size and sample type beside the two real
scans: skin, a skull shell, brain, random ventricles and vessels (seeded), a partial-volume
blur of one voxel and Gaussian noise of 25 HU, like a clinical CT of the head.

    python tools/ct_phantom.py OUT_STEM --dims 256,256,160 --dtype int16le [--seed 1]

writes OUT_STEM.raw and OUT_STEM.json. Values are Hounsfield units (air −1000, brain 40,
bone 800) stored as `int16le`, `uint16le` (HU + 1024, as many scanners store them),
`float32le`, or `uint8` ((HU + 1000) / 8). The sidecar's iso level is the bone threshold
(300 HU) in the stored units. Needs numpy and scipy (tools/requirements-compare.txt).
"""

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.ndimage import gaussian_filter

STORE = {
    "int16le": ("<i2", lambda hu: hu),
    "uint16le": ("<u2", lambda hu: hu + 1024.0),
    "float32le": ("<f4", lambda hu: hu),
    "uint8": ("u1", lambda hu: (hu + 1000.0) / 8.0),
}


def phantom(dims, seed):
    """HU values indexed [z, y, x] (x fastest in memory)."""
    nx, ny, nz = dims
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(np.linspace(-1, 1, nz, dtype=np.float32),
                          np.linspace(-1, 1, ny, dtype=np.float32),
                          np.linspace(-1, 1, nx, dtype=np.float32), indexing="ij")
    r = np.sqrt((x / 0.8) ** 2 + (y / 0.9) ** 2 + (z / 0.85) ** 2)
    hu = np.full(r.shape, -1000.0, np.float32)
    hu[r < 1.0] = 30.0  # skin and soft tissue
    hu[(r < 0.93) & (r > 0.85)] = 800.0  # skull
    hu[r <= 0.85] = 40.0  # brain
    for _ in range(30):  # ventricles (fluid) and vessels (contrast)
        c = rng.uniform(-0.6, 0.6, 3)
        s = rng.uniform(0.03, 0.12)
        d = np.sqrt((x - c[0]) ** 2 + (y - c[1]) ** 2 + (z - c[2]) ** 2)
        hu[d < s] = rng.choice([5.0, 350.0])
    hu = gaussian_filter(hu, 1.0)
    hu += rng.normal(0.0, 25.0, hu.shape).astype(np.float32)
    return hu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="output stem: writes STEM.raw and STEM.json")
    ap.add_argument("--dims", required=True, help="X,Y,Z samples")
    ap.add_argument("--dtype", choices=sorted(STORE), default="int16le")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    try:
        dims = [int(v) for v in args.dims.split(",")]
    except ValueError:
        ap.error(f"--dims {args.dims!r}: three whole numbers X,Y,Z")
    if len(dims) != 3 or min(dims) < 2:
        ap.error("--dims: three sizes of at least 2")
    if args.seed < 0:
        ap.error("--seed: a number of at least 0")
    if not args.out.name or args.out.name in (".", ".."):
        ap.error(f"{args.out}: an output stem needs a file name")
    if not args.out.parent.is_dir():
        ap.error(f"{args.out.parent}: no such folder")
    # STEM.raw and STEM.json, whatever dots the stem holds (ct_0.5mm → ct_0.5mm.raw).
    raw, sidecar = Path(f"{args.out}.raw"), Path(f"{args.out}.json")
    np_type, store = STORE[args.dtype]
    info = np.iinfo(np_type) if np.dtype(np_type).kind in "iu" else None
    values = store(phantom(dims, args.seed))
    if info is not None:
        values = np.clip(np.rint(values), info.min, info.max)
    values.astype(np_type).tofile(raw)
    iso = float(store(np.float32(300.0)))
    if info is not None:
        iso = float(np.floor(iso)) + 0.5  # between stored integers: no sample on the iso level
    meta = {
        "file": raw.name,
        "dims_xyz": dims,
        "dtype": args.dtype,
        "spacing_xyz": [0.9, 0.9, 1.25],
        "kind": f"synthetic CT head phantom (tools/ct_phantom.py, seed {args.seed})",
        "iso_values": {"bone": iso},
    }
    sidecar.write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
