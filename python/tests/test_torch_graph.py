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


def epochs_of(lines):
    """read_jsonl lines split by epoch: [[sequences of each minibatch], ...]."""
    out = []
    for l in lines:
        while len(out) <= l["epoch"]:
            out.append([])
        out[l["epoch"]].append(l["sequences"])
    return out


@unittest.skipIf(torch is None, "python3-torch absent")
class DatasetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        d = tempfile.mkdtemp()
        cls.corpus = os.path.join(d, "c.ctf")
        write_corpus(cls.corpus, 40)
        cls.onehot = os.path.join(d, "onehot.ctf")
        with open(cls.onehot, "w") as f:
            for i in range(30):
                for j in range(1 + i % 3):
                    f.write("%d |w %d:1\n" % (i, (i + j) % 9))

    def want(self, *args):
        return epochs_of(read_jsonl([self.corpus, "--stream", "x:2", "--stream", "y:7:sparse"] + list(args)))

    def test_rank_from_env_and_resume(self):
        kw = dict(mb="8", seed=2, epochs=2)
        with mock.patch.dict(os.environ, {"RANK": "1", "WORLD_SIZE": "2"}):
            ds = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], **kw)
        self.assertEqual((ds.rank, ds.workers), (1, 2))
        want = self.want("--mb", "8", "--seed", "2", "--epochs", "2", "--workers", "2", "--rank", "1")
        got, saved = [], None
        for e in range(2):
            got.append([])
            for i, mb in enumerate(DataLoader(ds, batch_size=None)):
                got[e].append(mb.sequences.tolist())
                if (e, i) == (0, 4):
                    saved = ds.state_dict()
        self.assertEqual(got, want)
        t = mb.to_torch()
        self.assertEqual(t["x"].dtype, torch.float32)
        self.assertEqual(len(t["y"]), 3)
        ds2 = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=1, workers=2, **kw)
        ds2.load_state_dict(json.loads(json.dumps(saved)))
        self.assertEqual([mb.sequences.tolist() for mb in DataLoader(ds2, batch_size=None)], got[0][5:])
        self.assertEqual([mb.sequences.tolist() for mb in DataLoader(ds2, batch_size=None)], got[1])
        with self.assertRaises(ValueError):
            ds2.load_state_dict({"position": 3})

    def test_epoch_loop(self):
        # The usual PyTorch loop: each iteration is the next epoch; past
        # epochs= an iteration says so instead of giving nothing.
        want = self.want("--mb", "6", "--seed", "5", "--epochs", "3")
        ds = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=0, workers=1, mb="6", seed=5, epochs=3)
        got = [[mb.sequences.tolist() for mb in DataLoader(ds, batch_size=None)] for e in range(3)]
        self.assertEqual(got, want)
        with self.assertRaisesRegex(RuntimeError, "epochs=3"):
            list(DataLoader(ds, batch_size=None))
        # Unlimited epochs, epoch_size in samples.
        want = self.want("--mb", "6", "--epoch-size", "25", "--epochs", "4")
        ds = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=0, workers=1, mb="6", epoch_size="25")
        self.assertEqual([[mb.sequences.tolist() for mb in ds] for e in range(4)], want)

    def test_workers_resume(self):
        want = self.want("--mb", "7", "--seed", "3", "--epochs", "2")
        for nw in (0, 1, 2):
            with self.subTest(num_workers=nw):
                ds = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=0, workers=1, mb="7", seed=3, epochs=2)
                got = []
                for i, mb in enumerate(DataLoader(ds, batch_size=None, num_workers=nw)):
                    got.append(mb.sequences.tolist())
                    self.assertEqual(ds.state_dict()["state"], mb.state)
                    if i == 4:
                        break
                self.assertEqual(got, want[0][:5])
                saved = json.loads(json.dumps(ds.state_dict()))
                ds2 = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=0, workers=1, mb="7", seed=3,
                                      epochs=2, transform=lambda mb: (mb.sequences.tolist(), mb.to_torch()))
                ds2.load_state_dict(saved)
                rest = [[seqs for seqs, _ in DataLoader(ds2, batch_size=None, num_workers=nw)] for e in range(2)]
                self.assertEqual(rest, [want[0][5:], want[1]])
                self.assertEqual(ds2.state_dict()["state"]["epoch"], 2)
                # The same dataset left early continues where the loop stopped.
                rest = []
                for e in range(2):
                    rest += [mb.sequences.tolist() for mb in DataLoader(ds, batch_size=None, num_workers=nw)]
                self.assertEqual(rest, want[0][5:] + want[1])

    def test_workers_then_none(self):
        want = self.want("--mb", "7", "--seed", "3", "--epochs", "3")
        ds = SequenceDataset([self.corpus], ["x:2", "y:7:sparse"], rank=0, workers=1, mb="7", seed=3, epochs=3)
        got = [[mb.sequences.tolist() for mb in DataLoader(ds, batch_size=None, num_workers=nw)] for nw in (1, 0, 2)]
        self.assertEqual(got, want)
        self.assertEqual(ds.state_dict()["state"]["epoch"], 3)

    def test_tensors_safe_to_write(self):
        import warnings
        ds = SequenceDataset([self.onehot], ["w:9:sparse"], rank=0, workers=1, mb="5")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no read-only tensor warning either
            seen = 0
            for mb in ds:
                indptr, indices, values = mb.to_torch()["w"]
                n = len(indices)
                self.assertEqual(indptr.tolist(), list(range(n + 1)))
                self.assertEqual(values.tolist(), [1.0] * n)
                before = mb["w"][1].tolist()
                indptr.add_(1)
                values.mul_(3)
                indices.add_(1)
                self.assertEqual(mb["w"][0].tolist(), list(range(n + 1)))
                self.assertEqual(mb["w"][1].tolist(), before)
                self.assertEqual(mb["w"][2].tolist(), [1.0] * n)
                for a in mb["w"]:
                    with self.assertRaises(ValueError):
                        a[0] = 7
                seen += 1
        self.assertGreater(seen, 3)

    def test_minibatch_pickles(self):
        import pickle
        for mb in batchprep.read([self.corpus], streams=["x:2", "y:7:sparse"], mb="9", max_minibatches=3):
            back = pickle.loads(pickle.dumps(mb))
            self.assertEqual((back.step, back.epoch, back.start, back.end), (mb.step, mb.epoch, mb.start, mb.end))
            self.assertEqual(back.sequences.tolist(), mb.sequences.tolist())
            self.assertEqual(back["x"].tolist(), mb["x"].tolist())
            self.assertEqual([a.tolist() for a in back["y"]], [a.tolist() for a in mb["y"]])
            self.assertEqual(back.state, mb.state)
            self.assertEqual(back.ids, mb.ids)
            self.assertEqual({k: v.tolist() for k, v in back.lengths.items()},
                             {k: v.tolist() for k, v in mb.lengths.items()})


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
