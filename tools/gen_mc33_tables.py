#!/usr/bin/env python3
"""Writes crates/mesh/src/mc33_tables.rs from Lewiner et al.'s Marching Cubes 33 tables.

Input: lewiner_mc33_luts.json (the tables of scikit-image's
skimage/measure/_marching_cubes_lewiner_luts.py, BSD-3-Clause, themselves generated from
Thomas Lewiner's LookUpTable.h; decoded from base64 int8 to nested lists), from the team's
data set, not in this repository. Run from the repository root:

    python3 tools/gen_mc33_tables.py PATH/TO/lewiner_mc33_luts.json

Conventions. Lewiner's corner numbering and edge numbering are the same as loam's
`tables::CORNERS` / `tables::EDGES` (Bourke's): corner 0 (0,0,0), 1 (1,0,0), 2 (1,1,0),
3 (0,1,0), 4..7 the same at z = 1; edges 0-3 around z = 0, 4-7 around z = 1, 8-11 along z.
Lewiner's case index sets bit m when corner m's value is > 0; loam's sets it when the field
is < 0 (inside). The mesher therefore feeds the tables w = -field, so both indices are the
same number and the tables are used unchanged. Entry 12 of a tiling is the extra vertex
inside the cell. The script checks that every tiling of every index uses exactly the edges
that index crosses (under loam's CORNERS/EDGES), which pins down both numberings.
"""
import json
import sys

# loam's numbering (crates/mesh/src/tables.rs).
CORNERS = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)]

# Tables the mesher uses, in output order. Not needed: CASESCLASSIC (the classic table) and
# TEST4 (only the sign of Lewiner's interior test, which the mesher replaces).
NAMES = [
    "CASES",
    "TILING1", "TILING2", "TILING3_1", "TILING3_2", "TILING4_1", "TILING4_2", "TILING5",
    "TILING6_1_1", "TILING6_1_2", "TILING6_2", "TILING7_1", "TILING7_2", "TILING7_3",
    "TILING7_4_1", "TILING7_4_2", "TILING8", "TILING9", "TILING10_1_1", "TILING10_1_1_",
    "TILING10_1_2", "TILING10_2", "TILING10_2_", "TILING11", "TILING12_1_1", "TILING12_1_1_",
    "TILING12_1_2", "TILING12_2", "TILING12_2_", "TILING13_1", "TILING13_1_", "TILING13_2",
    "TILING13_2_", "TILING13_3", "TILING13_3_", "TILING13_4", "TILING13_5_1", "TILING13_5_2",
    "TILING14",
    "TEST3", "TEST6", "TEST7", "TEST10", "TEST12", "TEST13", "SUBCONFIG13",
]

DOCS = {
    "CASES": "Per case index (bit m set when corner m is inside): `[case, config]`, case 0 for none.",
    "TEST3": "Case 3: the signed face to test (faces 1..=6, see `mc33_cases`).",
    "TEST6": "Case 6: `[face, s, reference edge]` (only the face is used).",
    "TEST7": "Case 7: `[face, face, face, s, reference edge]` (only the faces are used).",
    "TEST10": "Case 10: `[face, face, s]` (only the faces are used).",
    "TEST12": "Case 12: `[face, face, s, reference edge]` (only the faces are used).",
    "TEST13": "Case 13: `[face × 6, s]` (only the faces are used).",
    "SUBCONFIG13": "Case 13: the six face-test bits to the sub-configuration number.",
}


def rust_type(shape):
    t = "i8"
    for n in reversed(shape):
        t = "[%s; %d]" % (t, n)
    return t


def rust_value(v, depth, indent):
    if not isinstance(v[0], list):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if depth == 0:
        # Rows packed several to a line (up to 100 columns) so the tables stay readable.
        lines, cur = [], "   "
        for x in v:
            item = " " + rust_value(x, depth + 1, indent) + ","
            if len(cur) + len(item) > 100 and cur.strip():
                lines.append(cur)
                cur = "   "
            cur += item
        lines.append(cur)
        return "[\n" + "".join(l + "\n" for l in lines) + "]"
    return "[" + ", ".join(rust_value(x, depth + 1, indent) for x in v) + "]"


def check(tables):
    t = {k: tables[k]["data"] for k in NAMES}

    def crossed(index):
        return {e for e, (a, b) in enumerate(EDGES) if ((index >> a) & 1) != ((index >> b) & 1)}

    def faces_of_edge(e):
        a, b = EDGES[e]
        ca, cb = CORNERS[a], CORNERS[b]
        return {(ax, ca[ax]) for ax in range(3) if ca[ax] == cb[ax]}

    def tilings(case, cfg):
        """Every tiling the mesher may emit for (case, config)."""
        names = {
            1: ["TILING1"], 2: ["TILING2"], 3: ["TILING3_1", "TILING3_2"], 4: ["TILING4_1", "TILING4_2"],
            5: ["TILING5"], 6: ["TILING6_1_1", "TILING6_1_2", "TILING6_2"],
            7: ["TILING7_1", "TILING7_2", "TILING7_3", "TILING7_4_1", "TILING7_4_2"],
            8: ["TILING8"], 9: ["TILING9"],
            10: ["TILING10_1_1", "TILING10_1_1_", "TILING10_1_2", "TILING10_2", "TILING10_2_"],
            11: ["TILING11"],
            12: ["TILING12_1_1", "TILING12_1_1_", "TILING12_1_2", "TILING12_2", "TILING12_2_"],
            13: ["TILING13_1", "TILING13_1_", "TILING13_2", "TILING13_2_", "TILING13_3", "TILING13_3_",
                 "TILING13_4", "TILING13_5_1", "TILING13_5_2"],
            14: ["TILING14"],
        }[case]
        out = []
        for name in names:
            entry = t[name][cfg]
            out.extend(entry if isinstance(entry[0], list) else [entry])
        return out

    across = set()
    for index in range(256):
        case, cfg = t["CASES"][index]
        if index in (0, 255):
            assert case == 0
            continue
        assert 1 <= case <= 14, index
        for tiling in tilings(case, cfg):
            assert len(tiling) % 3 == 0
            used = set(tiling) - {12}
            assert used == crossed(index), (index, case, cfg, tiling)
            for i in range(0, len(tiling), 3):
                tri = tiling[i:i + 3]
                if 12 in tri:
                    others = [e for e in tri if e != 12]
                    assert len(others) == 2, (index, tri)
                    if not faces_of_edge(others[0]) & faces_of_edge(others[1]):
                        across.add((case, tuple(sorted(others))))


    return across


def main():
    src = json.load(open(sys.argv[1]))
    tables = src["tables"]
    across = check(tables)
    print("triangles through vertex 12 whose other two vertices share no face: %d (cases %s)"
          % (len(across), sorted({c for c, _ in across})))
    out = []
    out.append("//! Marching Cubes 33 lookup tables (Chernyaev 1995; Lewiner, Lopes, Vieira & Tavares")
    out.append("//! 2003, 'Efficient implementation of Marching Cubes' cases with topological")
    out.append("//! guarantees'), as data.")
    out.append("//!")
    out.append("//! Generated by `tools/gen_mc33_tables.py` from Thomas Lewiner's `LookUpTable.h` as shipped")
    out.append("//! by scikit-image 0.26.0 in `skimage/measure/_marching_cubes_lewiner_luts.py` (BSD-3-Clause,")
    out.append("//! the scikit-image team; see `data/licenses/scikit-image_LICENSE.txt`). Do not edit by hand.")
    out.append("//!")
    out.append("//! Corner and edge numbering are those of [`crate::tables`]. Lewiner's index sets bit `m`")
    out.append("//! when corner `m` is positive; loam's when it is inside (field < 0): the mesher feeds the")
    out.append("//! tests `w = −field`, so the two indices coincide. In a tiling, 0..=11 are edges and 12 is")
    out.append("//! the extra vertex inside the cell; triangles wind as in [`crate::tables::TRI_TABLE`].")
    for name in NAMES:
        tab = tables[name]
        shape, data = tab["shape"], tab["data"]
        out.append("")
        doc = DOCS.get(name)
        if doc is None:
            sub = name[len("TILING"):].replace("_", ".").rstrip(".")
            if name.endswith("_"):
                doc = "Tiling of sub-case %s, Lewiner's variant for the opposite test outcome." % sub
            else:
                doc = "Tiling of sub-case %s: triples of vertices (edges 0..=11, 12 in the cell)." % sub
            if len(shape) == 3:
                doc += "\nIndexed `[config][sub-configuration]`."
        for line in doc.split("\n"):
            out.append("/// " + line)
        out.append("#[rustfmt::skip]")
        out.append("pub(crate) const %s: %s = %s;" % (name, rust_type(shape), rust_value(data, 0, 0)))
    open("crates/mesh/src/mc33_tables.rs", "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
