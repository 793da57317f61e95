"""The torch IterableDataset (rank from torchrun's environment, state_dict)
and read_graph against `batchprep plan`."""

import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

import batchprep

from .helpers import binary, read_jsonl, write_corpus

try:
    import torch
    from torch.utils.data import DataLoader

    from batchprep.torch import SequenceDataset
except ImportError:  # pragma: no cover
    torch = None


@unittest.skipIf(torch is None, "python3-torch absent")
class DatasetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        cls.corpus = os.path.join(tempfile.mkdtemp(), "c.ctf")
        write_corpus(cls.corpus, 40)

    def test_rank_from_env_and_resume(self):
        kw = dict(mb="8", seed=2, epochs=2)
        with mock.patch.dict(os.environ, {"RANK": "1", "WORLD_SIZE": "2"}):
            ds = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], **kw)
        self.assertEqual((ds.rank, ds.workers), (1, 2))
        want = read_jsonl([self.corpus, "--stream", "x:2", "--stream", "y:7:sparse", "--mb", "8", "--seed", "2",
                           "--epochs", "2", "--workers", "2", "--rank", "1"])
        got, saved = [], None
        for i, mb in enumerate(DataLoader(ds, batch_size=None)):
            got.append(mb.sequences.tolist())
            if i == 4:
                saved = ds.state_dict()
        self.assertEqual(got, [w["sequences"] for w in want])
        t = mb.to_torch()
        self.assertEqual(t["x"].dtype, torch.float32)
        self.assertEqual(len(t["y"]), 3)
        ds2 = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=1, workers=2, **kw)
        ds2.load_state_dict(json.loads(json.dumps(saved)))
        self.assertEqual([mb.sequences.tolist() for mb in DataLoader(ds2, batch_size=None)], got[5:])
        with self.assertRaises(ValueError):
            ds2.load_state_dict({"position": 3})


class GraphTest(unittest.TestCase):
    def test_read_graph_equals_plan(self):
        d = tempfile.mkdtemp()
        cfg = os.path.join(d, "g.json")
        with open(cfg, "w") as f:
            json.dump({"entity_path": d + "/ent", "edge_paths": [d + "/edges"], "checkpoint_path": d + "/ck",
                       "entities": {"n": {"num_partitions": 2}},
                       "relations": [{"name": "r", "lhs": "n", "rhs": "n"}],
                       "num_epochs": 2, "workers": 2, "batch_size": 4, "eval_fraction": 0.1, "seed": 1}, f)
        edges = os.path.join(d, "e.tsv")
        with open(edges, "w") as f:
            for i in range(120):
                f.write("a%d\ta%d\n" % ((i * 7) % 31, (i * 11 + 3) % 29))
        subprocess.run([binary(), "import", "--config", cfg, "--rhs-col", "1", edges], check=True,
                       stdout=subprocess.DEVNULL)
        out = subprocess.run([binary(), "plan", "--quiet", "--config", cfg, "--format", "jsonl"], check=True,
                             stdout=subprocess.PIPE).stdout.decode()
        want = [json.loads(l) for l in out.splitlines()]
        got = []
        for r in batchprep.read_graph(cfg):
            line = {"kind": r.kind, "epoch": r.epoch, "edge_set": r.edge_set, "chunk": r.chunk,
                    "bucket": list(r.bucket), "index": r.index}
            if r.kind == "bucket":
                line.update(edges=r.edges, holdout=r.holdout.tolist())
            else:
                line.update(worker=r.worker, batch=r.batch, relation=r.relation, edges=r.ordinals.tolist())
                self.assertEqual(len(r.lhs), len(r.ordinals))
            got.append(line)
        self.assertEqual(got, want)
        one = [r for r in batchprep.read_graph(cfg, worker=1) if r.kind == "batch"]
        self.assertEqual([r.ordinals.tolist() for r in one], [w["edges"] for w in want if w["kind"] == "batch" and w["worker"] == 1])


if __name__ == "__main__":
    unittest.main()
