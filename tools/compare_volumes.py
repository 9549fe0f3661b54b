#!/usr/bin/env python3
"""Compare `loam mesh-volume` with peer iso-surface extractors on the real scans in data/volumes.

For every JSON sidecar in data/volumes this meshes the raw volume at the sidecar's iso level
with scikit-image (marching_cubes, Lewiner and classic Lorensen), PyMCubes, VTK
(vtkMarchingCubes, vtkFlyingEdges3D) and Loam (mc, mc33, sn, dc through the `loam` binary),
computes the same statistics Loam reports (crates/mesh/src/stats.rs), prints one Markdown
table per volume and checks Loam against the peers. Exits 1 when a check fails.

    pip install -r tools/requirements-compare.txt
    cargo build --release -p loam
    python tools/compare_volumes.py [--loam target/release/loam] [--markdown FILE]

Timing is meshing only, best of --runs calls in one process for every method (Loam's through
`loam mesh-volume --runs`), one thread; it is reported, never asserted.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LOAM_MESHERS = ["mc", "mc33", "sn", "dc"]
DTYPES = {"uint8": "u1", "u8": "u1", "uint16le": "<u2", "uint16": "<u2", "u16le": "<u2",
          "int16le": "<i2", "int16": "<i2", "i16le": "<i2",
          "float32le": "<f4", "float32": "<f4", "f32le": "<f4"}


# ---------------------------------------------------------------------------------------------
# Volume loading
# ---------------------------------------------------------------------------------------------

def load_volume(sidecar: Path):
    """Returns (name, field indexed [x, y, z] as C-contiguous float32, spacing xyz, iso)."""
    meta = json.loads(sidecar.read_text())
    dims = meta["dims_xyz"]
    raw = np.fromfile(sidecar.parent / meta["file"], dtype=DTYPES[meta["dtype"]])
    assert raw.size == dims[0] * dims[1] * dims[2], f"{sidecar}: size mismatch"
    # The file is x fastest, so in C order it is [z, y, x]; transpose to [x, y, z] so that the
    # peers' vertex coordinates come out in x, y, z order. Converted to float32 once, outside
    # the timings (Loam also converts samples to a float32 field before meshing).
    vol = np.ascontiguousarray(raw.reshape(dims[2], dims[1], dims[0]).transpose(2, 1, 0),
                               dtype=np.float32)
    spacing = tuple(float(s) for s in meta.get("spacing_xyz", (1.0, 1.0, 1.0)))
    # Loam takes the sidecar's first numeric iso value; so do we.
    iso = next(float(v) for v in meta["iso_values"].values() if isinstance(v, (int, float)))
    return sidecar.stem, vol, spacing, iso


# ---------------------------------------------------------------------------------------------
# Mesh statistics: the definitions of crates/mesh/src/stats.rs, vectorised
# ---------------------------------------------------------------------------------------------

def weld_exact(verts, faces):
    """Merges vertices with bit-identical positions. Returns (verts, faces, merged count)."""
    uniq, inverse = np.unique(verts, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)[faces], len(verts) - len(uniq)


def mesh_stats(verts, faces):
    """Loam's MeshStats: used vertices, triangles, area, closed volume, edge and triangle checks."""
    p = np.asarray(verts, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    a, b, c = p[f[:, 0]], p[f[:, 1]], p[f[:, 2]]
    twice = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    repeated = (f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 0] == f[:, 2])
    # Undirected edges, each counted once per triangle using it.
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    e.sort(axis=1)
    _, uses = np.unique(e[:, 0] * len(p) + e[:, 1], return_counts=True)
    boundary, nonmanifold = int((uses == 1).sum()), int((uses > 2).sum())
    closed = boundary == 0 and nonmanifold == 0  # an empty mesh too: it encloses 0
    return {
        "triangles": len(f),
        "vertices": len(np.unique(f)),
        "area": float(0.5 * twice.sum()),
        # Divergence theorem; positive when triangles wind counter-clockwise seen from outside.
        "volume": float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0) if closed else None,
        "boundary_edges": boundary,
        "nonmanifold_edges": nonmanifold,
        "degenerate_triangles": int((repeated | (twice == 0.0)).sum()),
    }


# ---------------------------------------------------------------------------------------------
# Peers. Each returns (mesh function, extractor): the mesh function is what is timed, the
# extractor turns its result into (verts in spacing units, faces) outside the timing.
# ---------------------------------------------------------------------------------------------

def peer_skimage(vol, spacing, iso, method):
    from skimage import measure

    # skimage's idiom is a [z, y, x] array (the file's own C order) with spacing z, y, x; its
    # face winding assumes that order. Vertices come back z, y, x: flip them to x, y, z.
    zyx = np.ascontiguousarray(vol.transpose(2, 1, 0))

    def run():
        return measure.marching_cubes(zyx, level=iso, spacing=spacing[::-1], method=method)

    return run, lambda r: (r[0][:, ::-1], r[1])


def peer_pymcubes(vol, spacing, iso, sign=1.0):
    import mcubes

    # PyMCubes's native type is float64. With sign = -1 it meshes -field at -iso: the same
    # surface, but PyMCubes's case index then matches VTK's convention (see the report).
    vol64 = np.ascontiguousarray(sign * vol, dtype=np.float64)

    def run():
        return mcubes.marching_cubes(vol64, sign * iso)

    # PyMCubes works in index space: scale to the spacing (as Loam does after meshing).
    return run, lambda r: (r[0] * np.asarray(spacing), r[1])


def trilinear_reference_area(vol, spacing, iso, k=4):
    """Area of the iso-surface of the trilinear interpolant, nearly converged: classic marching
    cubes on a k-times trilinear upsampling (corner samples kept). A yardstick for meshers
    that do not follow cell edges (sn, dc), whose area need not match marching cubes'."""
    from scipy import ndimage
    from skimage import measure

    shape = [(n - 1) * k + 1 for n in vol.shape]
    fine = ndimage.zoom(vol, [s / n for s, n in zip(shape, vol.shape)], order=1,
                        grid_mode=False)
    v, f, _, _ = measure.marching_cubes(fine, level=iso, spacing=[s / k for s in spacing],
                                        method="lorensen")
    return mesh_stats(v, f)["area"]


def peer_vtk(vol, spacing, iso, cls_name):
    import vtkmodules.vtkFiltersCore as fc
    from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
    from vtkmodules.vtkCommonCore import vtkMultiThreader, vtkSMPTools
    from vtkmodules.vtkCommonDataModel import vtkImageData

    vtkSMPTools.SetBackend("Sequential")  # one thread, like everyone else here
    vtkMultiThreader.SetGlobalMaximumNumberOfThreads(1)
    img = vtkImageData()
    img.SetDimensions(*vol.shape)
    img.SetSpacing(*spacing)
    # VTK point order is x fastest: the [z, y, x] C-order view of our [x, y, z] array.
    scalars = numpy_to_vtk(np.ascontiguousarray(vol.transpose(2, 1, 0)).ravel(), deep=True)
    img.GetPointData().SetScalars(scalars)
    flt = getattr(fc, cls_name)()
    flt.SetInputData(img)
    flt.SetValue(0, iso)
    # Loam emits positions, normals and indices: ask VTK for the same, no scalars/gradients.
    flt.ComputeNormalsOn()
    flt.ComputeScalarsOff()
    flt.ComputeGradientsOff()

    def run():
        flt.Modified()  # force a fresh execution each run
        flt.Update()
        return flt.GetOutput()

    def extract(poly):
        verts = vtk_to_numpy(poly.GetPoints().GetData())
        polys = poly.GetPolys()
        offsets = vtk_to_numpy(polys.GetOffsetsArray())
        assert np.all(np.diff(offsets) == 3), f"{cls_name}: non-triangle cells"
        return verts, vtk_to_numpy(polys.GetConnectivityArray()).reshape(-1, 3)

    return run, extract


def best_of(run, runs):
    """Runs `run` `runs` times; returns (last result, best seconds)."""
    best, result = float("inf"), None
    for _ in range(runs):
        t = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - t)
    return result, best


def run_loam(loam, sidecar, mesher, runs):
    """Loam's stats from `loam mesh-volume`; time = its `seconds`, the best of `runs` calls in
    one process (`--runs`), as the peers are timed by best_of."""
    out = subprocess.run([str(loam), "mesh-volume", "--sidecar", str(sidecar),
                          "--mesher", mesher, "--runs", str(runs)],
                         check=True, capture_output=True, text=True)
    stats = json.loads(out.stdout)
    return {k: v for k, v in stats.items() if k != "seconds"}, stats["seconds"]


# ---------------------------------------------------------------------------------------------
# Report and checks
# ---------------------------------------------------------------------------------------------

def fmt_table(rows, loam_mc_s, ref_area):
    lines = ["| method | triangles | vertices | area | area vs trilinear | volume | boundary "
             "| non-manifold | degenerate | ms | Loam mc time / this |", "|" + "---|" * 11]
    for name, s, secs in rows:
        vol = "—" if s["volume"] is None else f"{s['volume']:.1f}"
        lines.append(
            f"| {name} | {s['triangles']} | {s['vertices']} | {s['area']:.1f} "
            f"| {100 * (s['area'] / ref_area - 1):+.2f}% | {vol} | {s['boundary_edges']} "
            f"| {s['nonmanifold_edges']} | {s['degenerate_triangles']} | {secs * 1e3:.2f} "
            f"| {loam_mc_s / secs:.2f} |")
    return "\n".join(lines)


def checks(stats, ref_area):
    """Returns [(passed, message)] for one volume; `stats` maps method name to its stats."""
    out = []

    def within(a, b, key, tol):
        x, y = stats[a][key], stats[b][key]
        r = abs(x - y) / abs(y)
        msg = f"{a} {key} vs {b}: {x:.6g} vs {y:.6g}, {100 * r:.2f}% (limit {100 * tol:g}%)"
        if r > tol and key == "area":
            # Say which side is off: both against the trilinear interpolant's own area.
            msg += (f"; against the trilinear yardstick {a} is {100 * (x / ref_area - 1):+.2f}%"
                    f", {b} {100 * (y / ref_area - 1):+.2f}%")
        out.append((r <= tol, msg))

    # Classic marching cubes against the classic peers. skimage's default 'lewiner' resolves
    # ambiguous faces like MC33 (different topology and area on noisy data), so Loam mc is
    # held to skimage 'lorensen' and Loam mc33 to skimage 'lewiner'.
    for peer in ["vtk MarchingCubes", "skimage lorensen"]:
        within("loam mc", peer, "triangles", 0.01)
        within("loam mc", peer, "area", 0.01)
    within("loam mc33", "skimage lewiner", "triangles", 0.01)
    within("loam mc33", "skimage lewiner", "area", 0.01)
    b_mc, b_vtk = stats["loam mc"]["boundary_edges"], stats["vtk MarchingCubes"]["boundary_edges"]
    out.append((b_mc == b_vtk, f"loam mc boundary edges {b_mc} == vtk MarchingCubes {b_vtk}"))
    # Surface Nets and Dual Contouring have no peer of their kind here. Where the MC peers agree
    # with each other (a smooth volume), they must agree with them within 1% too; on a noisy
    # volume MC's own area depends on its face rule (classic vs MC33 differ by several %), so
    # the figures are reported, not checked.
    spread = abs(stats["skimage lewiner"]["area"] / stats["vtk MarchingCubes"]["area"] - 1)
    for m in ["sn", "dc"]:
        if spread < 0.01:
            within(f"loam {m}", "vtk MarchingCubes", "area", 0.01)
        else:
            out.append((None, f"loam {m} area not checked: the MC peers differ by {100 * spread:.1f}% "
                              f"on this volume (reported above against the trilinear yardstick)"))
    for m in LOAM_MESHERS:
        d = stats[f"loam {m}"]["degenerate_triangles"]
        out.append((d == 0, f"loam {m} degenerate triangles {d} == 0"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loam", type=Path, default=ROOT / "target/release/loam",
                    help="the loam binary (default target/release/loam; mind CARGO_TARGET_DIR)")
    ap.add_argument("--volumes", type=Path, default=ROOT / "data/volumes")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per method (best is kept)")
    ap.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = ap.parse_args()
    if not args.loam.is_file():
        sys.exit(f"loam binary not found at {args.loam}: build it or pass --loam PATH")

    doc, failed = ["# Loam vs peers on real scans", ""], 0
    for sidecar in sorted(args.volumes.glob("*.json")):
        name, vol, spacing, iso = load_volume(sidecar)
        peers = {
            "skimage lewiner": peer_skimage(vol, spacing, iso, "lewiner"),
            "skimage lorensen": peer_skimage(vol, spacing, iso, "lorensen"),
            "PyMCubes": peer_pymcubes(vol, spacing, iso),
            "PyMCubes on −field": peer_pymcubes(vol, spacing, iso, sign=-1.0),
            "vtk MarchingCubes": peer_vtk(vol, spacing, iso, "vtkMarchingCubes"),
            "vtk FlyingEdges3D": peer_vtk(vol, spacing, iso, "vtkFlyingEdges3D"),
        }
        rows, stats, notes = [], {}, []
        for label, (run, extract) in peers.items():
            result, secs = best_of(run, args.runs)
            verts, faces = extract(result)
            verts, faces, merged = weld_exact(verts, faces)
            if merged:
                notes.append(f"{label}: {merged} vertices welded by exact position")
            stats[label] = mesh_stats(verts, faces)
            rows.append((label, stats[label], secs))
        for m in LOAM_MESHERS:
            s, secs = run_loam(args.loam, sidecar, m, args.runs)
            stats[f"loam {m}"] = s
            rows.append((f"loam {m}", s, secs))
        loam_mc_s = rows[-len(LOAM_MESHERS)][2]
        ref_area = trilinear_reference_area(vol, spacing, iso)

        doc += [f"## {name}", "",
                f"dims {list(vol.shape)}, spacing {list(spacing)}, iso {iso}; "
                f"best of {args.runs} runs, one thread. \"area vs trilinear\": against "
                f"{ref_area:.1f}, the iso-surface area of the trilinear interpolant (marching "
                "cubes on a 4× trilinear upsampling). \"Loam mc time / this\" above 1: this "
                "method is faster than Loam mc.", "",
                fmt_table(rows, loam_mc_s, ref_area), ""]
        if notes:
            doc += ["Welding: " + "; ".join(notes) + ".", ""]
        doc += ["Checks:", ""]
        for ok, msg in checks(stats, ref_area):
            failed += ok is False
            doc.append(f"- {'NOTE' if ok is None else 'PASS' if ok else 'FAIL'}: {msg}")
        doc.append("")

    doc.append(f"**{failed} check(s) failed.**" if failed else "**All checks passed.**")
    text = "\n".join(doc) + "\n"
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
