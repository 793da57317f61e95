#!/usr/bin/python3
"""Writes a small PyTorch-BigGraph data directory with Debian's python3-h5py,
the way PBG's importer lays it out: entity_count_{type}_{part}.txt (count and
a newline), entity_names_{type}_{part}.json (indent 4),
dynamic_rel_names.json, and edges_{lhs}_{rhs}.h5 with resizable chunked int64
datasets lhs, rhs, rel (and weight in one bucket), root attribute
format_version = 1, no file for an empty bucket. expected.json lists every
bucket's edges for the Go test. Run from this directory: /usr/bin/python3 gen.py
"""
import json
import os

import h5py
import numpy as np

D = "pbgdata"
os.makedirs(os.path.join(D, "train"), exist_ok=True)
names = {("user", 0): ["ann", "bob", "cy"], ("user", 1): ["dee", "éva"], ("item", 0): ["pen", "cup", "hat", "box"]}
for (t, p), ns in names.items():
    with open(os.path.join(D, "entity_count_%s_%d.txt" % (t, p)), "w") as f:
        f.write("%d\n" % len(ns))
    with open(os.path.join(D, "entity_names_%s_%d.json" % (t, p)), "w") as f:
        json.dump(ns, f, indent=4)
with open(os.path.join(D, "dynamic_rel_names.json"), "w") as f:
    json.dump(["buys", "follows"], f, indent=4)

# Relation 0 buys: user -> item (1 partition); 1 follows: user -> user.
# Bucket (l, r): lhs users of partition l; rhs users of partition r, items of partition 0.
buckets = {
    (0, 0): [(0, 0, 0), (1, 3, 0), (2, 1, 1), (0, 2, 1), (1, 1, 0), (2, 0, 0)],
    (0, 1): [(0, 1, 1), (2, 0, 1), (1, 2, 0)],
    (1, 1): [(0, 1, 1), (1, 0, 1), (1, 3, 0), (0, 0, 0), (1, 2, 0)],
    # (1, 0) is empty: no file, as PBG's importer leaves it.
}
weights = {(0, 1): [2, 1, 5]}
expected = {}
for (l, r), es in buckets.items():
    with h5py.File(os.path.join(D, "train", "edges_%d_%d.h5" % (l, r)), "w") as hf:
        hf.attrs["format_version"] = 1
        cols = {"lhs": [e[0] for e in es], "rhs": [e[1] for e in es], "rel": [e[2] for e in es]}
        if (l, r) in weights:
            cols["weight"] = weights[(l, r)]
        for name, v in cols.items():
            ds = hf.create_dataset(name, shape=(0,), maxshape=(None,), chunks=(4,), dtype=np.int64)
            ds.resize((len(v),))
            ds[:] = np.array(v, dtype=np.int64)
    expected["%d_%d" % (l, r)] = {k: list(map(int, v)) for k, v in cols.items()}
with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
