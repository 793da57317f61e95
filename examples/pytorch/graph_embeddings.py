"""Entity embeddings trained on graph batches streamed by batchprep serve.

    python3 examples/pytorch/graph_embeddings.py --kg ../shared/data/kg/nations --epochs 10

Imports the knowledge graph's train.txt with `batchprep import` into a temp
directory (one partition, dynamic relations off, 2 Hogwild workers), then
streams the plan's batches with batchprep.read_graph from a local `batchprep
serve` and trains a DistMult model (entity and relation vectors, score =
sum(lhs * rel * rhs)) with a logistic loss against in-batch negatives (each
positive's rhs replaced by the others' rhs). Every batch holds one relation
type (SPEC B2.5). Prints the mean loss per epoch (it falls) and how many
edges the plan held out for evaluation (eval_fraction; never trained). Under
torchrun (RANK set) a process takes that Hogwild worker's batches only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import batchprep  # noqa: E402


def binary():
    import shutil
    return os.environ.get("BATCHPREP_BIN") or shutil.which("batchprep")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kg", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "kg", "nations"))
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.05)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="batchprep-graph-") as d:
        train(a, d)


def train(a, d):
    edges = os.path.join(a.kg, "train.txt")
    rels = sorted({l.split("\t")[1] for l in open(edges) if l.strip()})
    cfg = {"entity_path": d + "/entities", "edge_paths": [d + "/edges"], "checkpoint_path": d + "/ckpt",
           "entities": {"e": {"num_partitions": 1}},
           "relations": [{"name": r, "lhs": "e", "rhs": "e", "operator": "diagonal"} for r in rels],
           "num_epochs": a.epochs, "workers": 2, "batch_size": a.batch, "eval_fraction": 0.05, "seed": 0}
    cfg_path = os.path.join(d, "config.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    subprocess.run([binary(), "import", "--config", cfg_path, "--rel-col", "1", "--rhs-col", "2", edges],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(edges) as f:
        n_ent = len({t for l in f if l.strip() for t in (l.split("\t")[0], l.split("\t")[2].strip())})
    torch.manual_seed(0)
    ent = torch.nn.Embedding(n_ent, a.dim)
    rel = torch.nn.Embedding(len(rels), a.dim)
    torch.nn.init.normal_(ent.weight, std=0.1)
    torch.nn.init.normal_(rel.weight, std=0.1)
    opt = torch.optim.Adagrad(list(ent.parameters()) + list(rel.parameters()), lr=a.lr)
    worker = int(os.environ["RANK"]) if "RANK" in os.environ else None
    losses, holdout, epoch = [], [], -1
    for r in batchprep.read_graph(cfg_path, worker=worker):
        if r.kind == "bucket":
            if r.epoch == 0:
                holdout.extend(r.holdout.tolist())
            if r.epoch != epoch:
                if losses:
                    print("epoch %d mean loss %.4f" % (epoch, np.mean(losses)), flush=True)
                epoch, losses = r.epoch, []
            continue
        lhs, rhs = torch.from_numpy(r.lhs.astype(np.int64)), torch.from_numpy(r.rhs.astype(np.int64))
        rv = rel(torch.tensor([r.relation]))
        scores = (ent(lhs) * rv) @ ent(rhs).T  # [i, j]: lhs i with rhs j; the diagonal are the positives
        labels = torch.eye(len(lhs))
        loss = torch.nn.functional.binary_cross_entropy_with_logits(scores, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    print("epoch %d mean loss %.4f" % (epoch, np.mean(losses)), flush=True)
    print("held-out edges (never trained): %d" % len(holdout))


if __name__ == "__main__":
    main()
