#!/usr/bin/env python3
"""Rank test edges from a batchprep TSV export alone, as `batchprep eval` does.

Usage:
    score_export.py EXPORT.tsv TEST.txt [--filter FILE ...]

EXPORT.tsv is the output of `batchprep export` (TSV). TEST.txt and the filter
files hold edges as head<TAB>relation<TAB>tail. Prints the metrics as JSON:
count, unknown, mrr, hits@1, hits@3, hits@10, mean_rank. The scoring
function is the one docs/training.md describes ("Scoring from an export").
Plain Python, no dependencies; meant as a reference, not for large graphs.
"""

import json
import math
import struct
import sys


def f32(s):
    # The export prints each float32 in its shortest form; read back the
    # float32 itself, not the nearest float64 to the decimal text.
    return struct.unpack("f", struct.pack("f", float(s)))[0]


def read_export(path):
    types, rels, cmp = {}, {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "@comparator":
                cmp = fields[1]
            elif fields[0] == "@relation":
                name, lhs, rhs, side, op = fields[1:6]
                rels.setdefault(name, {})[side] = (lhs, rhs, op, [f32(x) for x in fields[6:]])
            else:
                ids, embs = types.setdefault(fields[0], ({}, []))
                ids[fields[1]] = len(embs)
                embs.append([f32(x) for x in fields[2:]])
    return types, rels, cmp


def apply(op, p, x):
    d = len(x)
    if op == "none":
        return list(x)
    if op == "translation":
        return [x[i] + p[i] for i in range(d)]
    if op == "diagonal":
        return [x[i] * p[i] for i in range(d)]
    if op == "complex_diagonal":
        h = d // 2
        re = [x[i] * p[i] - x[h + i] * p[h + i] for i in range(h)]
        im = [x[i] * p[h + i] + x[h + i] * p[i] for i in range(h)]
        return re + im
    if op in ("linear", "affine"):
        y = [sum(p[i * d + j] * x[j] for j in range(d)) for i in range(d)]
        if op == "affine":
            y = [y[i] + p[d * d + i] for i in range(d)]
        return y
    raise ValueError("unknown operator %r" % op)


def compare(cmp, a, b):
    ab = sum(x * y for x, y in zip(a, b))
    aa = sum(x * x for x in a)
    bb = sum(y * y for y in b)
    if cmp == "dot":
        return ab
    if cmp == "cos":
        return ab / (max(math.sqrt(aa), 1e-12) * max(math.sqrt(bb), 1e-12))
    if cmp == "l2":
        return -math.sqrt(max(aa + bb - 2 * ab, 0))
    if cmp == "squared_l2":
        return -max(aa + bb - 2 * ab, 0)
    raise ValueError("unknown comparator %r" % cmp)


def read_edges(path, types, rels):
    known, unknown = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            h, r, t = line.split("\t")[:3]
            rel = rels.get(r, {}).get("rhs")
            if rel is None or h not in types[rel[0]][0] or t not in types[rel[1]][0]:
                unknown += 1
                continue
            known.append((r, types[rel[0]][0][h], types[rel[1]][0][t]))
    return known, unknown


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0 or any(a != "--filter" for a in argv[3::2]):
        sys.exit(__doc__)
    types, rels, cmp = read_export(argv[1])
    edges, unknown = read_edges(argv[2], types, rels)
    true = set(edges)
    for path in argv[4::2]:
        true.update(read_edges(path, types, rels)[0])
    ranks = []
    for corrupt_rhs in (True, False):
        for r, u, v in edges:
            lhs_t, rhs_t, rop, rp = rels[r]["rhs"]
            if corrupt_rhs:
                cands, truth = types[rhs_t][1], v
                x = types[lhs_t][1][u]
                if "lhs" in rels[r]:
                    _, _, lop, lp = rels[r]["lhs"]
                    fx = apply(lop, lp, x)
                    scores = [compare(cmp, fx, c) for c in cands]
                else:
                    scores = [compare(cmp, x, apply(rop, rp, c)) for c in cands]
                others = {c for c in range(len(cands)) if (r, u, c) in true}
            else:
                cands, truth = types[lhs_t][1], u
                fx = apply(rop, rp, types[rhs_t][1][v])
                scores = [compare(cmp, c, fx) for c in cands]
                others = {c for c in range(len(cands)) if (r, c, v) in true}
            ts = scores[truth]
            ranks.append(1 + sum(1 for c, s in enumerate(scores) if c != truth and c not in others and s >= ts))
    n = len(ranks)
    out = {"count": n, "unknown": unknown}
    if n:
        out["mrr"] = sum(1 / r for r in ranks) / n
        out["mean_rank"] = sum(ranks) / n
        for k in (1, 3, 10):
            out["hits@%d" % k] = sum(1 for r in ranks if r <= k) / n
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
