#!/usr/bin/python3
"""Filtered ranks of test edges from a TSV export, among all entities and
among the true entity's partition of another store (docs/performance-train.md,
"Quality under partitioning").

`batchprep eval` prints the second figure for a partitioned checkpoint
(within_partition); this script applies one store's partitions to another
run's export, so that an unpartitioned model can be ranked within the same
entity sets as a partitioned one. One entity type, one relation, outside
dynamic mode, dot comparator (the benchmark's setting); needs numpy.

  /usr/bin/python3 bench/partition_ranks.py EXPORT.tsv TEST.tsv TRAIN.tsv ENTITY_DIR
"""
import json
import os
import sys

import numpy as np


def main(export, test_path, train_path, entity_dir):
    names, rows, op = [], [], None
    with open(export) as f:
        for line in f:
            col = line.rstrip("\n").split("\t")
            if col[0] == "@relation":
                if col[5] != "complex_diagonal":
                    sys.exit("only complex_diagonal is handled, not " + col[5])
                op = np.array(col[6:], dtype=np.float64)
            elif not col[0].startswith("@"):
                names.append(col[1])
                rows.append(np.array(col[2:], dtype=np.float64))
    emb = np.stack(rows)
    index = {s: i for i, s in enumerate(names)}
    part = np.full(len(names), -1)
    p = 0
    while True:
        path = [os.path.join(entity_dir, n) for n in os.listdir(entity_dir)
                if n.startswith("entity_names_") and n.endswith("_%d.json" % p)]
        if not path:
            break
        with open(path[0]) as f:
            for s in json.load(f):
                part[index[s]] = p
        p += 1
    h = emb.shape[1] // 2
    re, im = op[:h], op[h:]
    rhs_op = np.concatenate([emb[:, :h] * re - emb[:, h:] * im, emb[:, :h] * im + emb[:, h:] * re], axis=1)

    def edges(path):
        with open(path) as f:
            return [(index[a], index[b]) for a, _, b in (line.split() for line in f)]

    test = edges(test_path)
    known = {True: {}, False: {}}
    for a, b in test + edges(train_path):
        known[True].setdefault(a, set()).add(b)
        known[False].setdefault(b, set()).add(a)
    ranks = {"all": [], "within_partition": []}
    for rhs in (True, False):
        for start in range(0, len(test), 256):
            block = test[start:start + 256]
            if rhs:
                scores = emb[[a for a, _ in block]] @ rhs_op.T
            else:
                scores = rhs_op[[b for _, b in block]] @ emb.T
            for i, (a, b) in enumerate(block):
                truth, fixed = (b, a) if rhs else (a, b)
                row = scores[i]
                above = row >= row[truth]
                above[truth] = False
                for c in known[rhs].get(fixed, ()):
                    above[c] = False
                ranks["all"].append(1 + above.sum())
                ranks["within_partition"].append(1 + (above & (part == part[truth])).sum())
    out = {}
    for k, v in ranks.items():
        v = np.array(v, dtype=np.float64)
        out[k] = {"count": len(v), "mrr": float(np.mean(1 / v)), "hits@10": float(np.mean(v <= 10)), "mean_rank": float(v.mean())}
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
