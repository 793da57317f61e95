#!/usr/bin/env python3
"""Rank test edges from a PyTorch-BigGraph checkpoint directory alone.

Usage:
    score_pbg.py CHECKPOINT_DIR TEST.txt [--filter FILE ...]

CHECKPOINT_DIR is PBG's layout as `batchprep export --format pbg --out DIR`
writes it (and as PBG's own training leaves it, with its entity files
copied beside it): checkpoint_version.txt, config.json,
embeddings_{type}_{part}.v{N}.h5, model.v{N}.h5, entity_names_{type}_{part}.json
and dynamic_rel_names.json. The files are read with h5py only, the way
PBG's own loader reads them; the model (global embeddings, operators,
comparator) is turned into a batchprep TSV export in a temporary file and
ranked by score_export.py, so the metrics printed (JSON) are comparable
with `batchprep eval --format json`.
"""

import json
import os
import sys
import tempfile

import h5py
import numpy as np

import score_export

# batchprep's parameter order per operator, in PBG's parameter names.
PARAMS = {
    "none": [],
    "translation": ["translation"],
    "diagonal": ["diagonal"],
    "linear": ["linear_transformation"],
    "affine": ["linear_transformation", "translation"],
    "complex_diagonal": ["real", "imag"],
}
# The names PBG's dynamic operators give the same parameters.
DYNAMIC = {"translation": "translations", "diagonal": "diagonals",
           "linear_transformation": "linear_transformations", "real": "real", "imag": "imag"}


def check_version(hf, path):
    if hf.attrs.get("format_version", None) != 1:
        raise SystemExit("%s: format_version is not 1" % path)


def load(d):
    with open(os.path.join(d, "checkpoint_version.txt")) as f:
        version = int(f.read().strip() or "0")
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    model_path = os.path.join(d, "model.v%d.h5" % version)
    params = {}
    with h5py.File(model_path, "r") as hf:
        check_version(hf, model_path)
        if "model" in hf:
            hf["model"].visititems(lambda name, o: params.__setitem__(name, o[...]) if isinstance(o, h5py.Dataset) else None)
    types = {}
    for t, ent in sorted(cfg["entities"].items()):
        names, embs = [], []
        for p in range(ent["num_partitions"]):
            with open(os.path.join(d, "entity_names_%s_%d.json" % (t, p)), encoding="utf-8") as f:
                names += json.load(f)
            path = os.path.join(d, "embeddings_%s_%d.v%d.h5" % (t, p, version))
            with h5py.File(path, "r") as hf:
                check_version(hf, path)
                e = hf["embeddings"][...]
            if e.dtype != np.float32 or e.ndim != 2:
                raise SystemExit("%s: embeddings are %s %s, want 2-D float32" % (path, e.dtype, e.shape))
            embs.append(e)
        emb = np.concatenate(embs) if embs else np.zeros((0, cfg["dimension"]), np.float32)
        g = params.get("entities/%s/global_embedding" % t)
        if g is not None:
            emb = emb + g.astype(np.float32)  # float32 sums, as the model adds them
        types[t] = (names, emb)
    rels = []  # (name, lhs, rhs, side, operator, flat float32 parameters)
    if cfg.get("dynamic_relations"):
        r = cfg["relations"][0]
        with open(os.path.join(d, "dynamic_rel_names.json"), encoding="utf-8") as f:
            names = json.load(f)
        for k, name in enumerate(names):
            for side in ("rhs", "lhs"):
                p = [params["relations/0/operator/%s/%s" % (side, DYNAMIC[n])][k].ravel() for n in PARAMS[r["operator"]]]
                rels.append((name, r["lhs"], r["rhs"], side, r["operator"], p))
    else:
        for i, r in enumerate(cfg["relations"]):
            p = [params["relations/%d/operator/rhs/%s" % (i, n)].ravel() for n in PARAMS[r["operator"]]]
            rels.append((r["name"], r["lhs"], r["rhs"], "rhs", r["operator"], p))
    return cfg["comparator"], types, rels


def f32s(v):
    # repr of a float32 widened to float64 parses back to the same float32.
    return "\t".join(repr(float(x)) for x in v)


def write_export(out, cmp, types, rels):
    for t, (names, emb) in types.items():
        for name, row in zip(names, emb):
            out.write("%s\t%s\t%s\n" % (t, name, f32s(row)))
    out.write("@comparator\t%s\n" % cmp)
    for name, lhs, rhs, side, op, p in rels:
        flat = np.concatenate(p) if p else []
        out.write("\t".join(["@relation", name, lhs, rhs, side, op]) + ("\t" + f32s(flat) if len(flat) else "") + "\n")


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0 or any(a != "--filter" for a in argv[3::2]):
        sys.exit(__doc__)
    cmp, types, rels = load(argv[1])
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", encoding="utf-8", delete=False) as f:
        write_export(f, cmp, types, rels)
    try:
        score_export.main([argv[0], f.name] + argv[2:])
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main(sys.argv)
