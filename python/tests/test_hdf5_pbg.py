"""PyTorch-BigGraph's HDF5 files, checked with Debian's python3-h5py.

`batchprep export --format pbg` writes a checkpoint with batchprep's own
HDF5 writer (internal/hdf5); these tests open it with h5py and check what
PBG's loader reads (torchbiggraph/checkpoint_storage.py): the version
file, format_version attributes, the "embeddings" dataset's dtype and
shape, the model parameters' public names, shapes and state_dict_key
attributes, and config.json's keys; and that python/tools/score_pbg.py
ranks from those files exactly as `batchprep eval` does. The other way,
h5py writes PBG's data directory and `batchprep import --from pbg` reads it
with the same reader. Skipped, with the apt line, when h5py is absent.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tests.helpers import REPO, binary

try:
    import h5py
    import numpy as np
except ImportError:  # pragma: no cover
    h5py = None

# PBG's config schema keys (torchbiggraph/config.py, ConfigSchema).
PBG_KEYS = {
    "entities", "relations", "dimension", "init_scale", "max_norm", "global_emb", "comparator", "bias",
    "loss_fn", "margin", "regularization_coef", "regularizer", "entity_path", "edge_paths",
    "checkpoint_path", "init_path", "checkpoint_preservation_interval", "num_epochs", "num_edge_chunks",
    "max_edges_per_chunk", "bucket_order", "workers", "batch_size", "num_batch_negs", "num_uniform_negs",
    "disable_lhs_negs", "disable_rhs_negs", "lr", "relation_lr", "eval_fraction", "eval_num_batch_negs",
    "eval_num_uniform_negs", "early_stopping", "background_io", "verbose", "hogwild_delay",
    "dynamic_relations", "num_machines", "num_partition_servers", "distributed_init_method",
    "distributed_tree_init_order", "num_gpus", "num_groups_for_partition_server",
    "num_groups_per_sharded_partition_server", "partition_shard_size", "half_precision",
}
PUBLIC = re.compile(r"^(relations/(\d+)/operator/(lhs|rhs)/(\w+)|entities/(\w+)/global_embedding)$")

CONFIG = """entity_path = "{d}/ent"
edge_paths = ["{d}/train", "{d}/test"]
edge_roles = ["train", "test"]
checkpoint_path = "{d}/ckpt"
dimension = 6
num_epochs = 2
batch_size = 10
num_batch_negs = 10
num_uniform_negs = 5
lr = 0.1
eval_fraction = 0
workers = 1
comparator = "cos"
global_emb = true

[entities.user]
num_partitions = 2

[entities.item]
num_partitions = 1

[[relations]]
name = "buys"
lhs = "user"
rhs = "item"
operator = "affine"

[[relations]]
name = "follows"
lhs = "user"
rhs = "user"
operator = "complex_diagonal"
"""


def edges(n, seed):
    out = []
    for i in range(n):
        out.append("u%d\tbuys\ti%d" % (i % 23, (i * 7 + seed) % 11))
        out.append("u%d\tfollows\tu%d" % (i % 23, (i * 5 + seed) % 23))
    return "\n".join(out) + "\n"


@unittest.skipUnless(h5py, "python3-h5py is absent (apt-get install python3-h5py): PBG layout not checked")
class ExportPBGTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.d = cls.tmp.name
        for name, seed in (("train", 0), ("test", 3)):
            with open(os.path.join(d, name + ".txt"), "w") as f:
                f.write(edges(60 if name == "train" else 10, seed))
        cls.cfg = os.path.join(d, "c.toml")
        with open(cls.cfg, "w") as f:
            f.write(CONFIG.format(d=d))
        run = lambda *a: subprocess.run([binary()] + list(a), check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        run("import", "--quiet", "--config", cls.cfg, "--rel-col", "1", os.path.join(d, "train.txt"), os.path.join(d, "test.txt"))
        run("train", "--quiet", "--config", cls.cfg)
        cls.out = os.path.join(d, "pbg")
        run("export", "--config", cls.cfg, "--format", "pbg", "--out", cls.out)
        cls.eval = json.loads(run("eval", "--config", cls.cfg, "--edge-set", "test", "--format", "json").stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def version(self):
        with open(os.path.join(self.out, "checkpoint_version.txt")) as f:
            return int(f.read().strip())

    def test_version_and_config(self):
        self.assertEqual(self.version(), 2)  # 2 epochs x 1 training edge path x 1 chunk
        with open(os.path.join(self.out, "config.json")) as f:
            cfg = json.load(f)
        self.assertLessEqual(set(cfg), PBG_KEYS)
        self.assertEqual(cfg["checkpoint_path"], os.path.abspath(self.out))
        self.assertEqual(cfg["edge_paths"], [os.path.join(self.d, "train")])
        self.assertEqual([r["name"] for r in cfg["relations"]], ["buys", "follows"])

    def test_embeddings(self):
        v = self.version()
        for t, parts in (("user", 2), ("item", 1)):
            total = 0
            for p in range(parts):
                with open(os.path.join(self.out, "entity_count_%s_%d.txt" % (t, p))) as f:
                    count = int(f.read().strip())
                with open(os.path.join(self.out, "entity_names_%s_%d.json" % (t, p))) as f:
                    self.assertEqual(len(json.load(f)), count)
                with h5py.File(os.path.join(self.out, "embeddings_%s_%d.v%d.h5" % (t, p, v)), "r") as hf:
                    self.assertEqual(hf.attrs.get("format_version", None), 1)
                    self.assertIn("config/json", hf.attrs)
                    ds = hf["embeddings"]
                    self.assertEqual(ds.dtype, np.float32)
                    self.assertEqual(ds.shape, (count, 6))
                    if count:
                        out = np.empty(ds.shape, dtype=np.float32)
                        ds.read_direct(out)  # as PBG's load_embeddings does
                        self.assertTrue(np.isfinite(out).all())
                        self.assertGreater(float(np.abs(out).sum()), 0)
                    self.assertNotIn("optimizer", hf)
                total += count
            self.assertEqual(total, 23 if t == "user" else 11)

    def test_model(self):
        path = os.path.join(self.out, "model.v%d.h5" % self.version())
        found = {}
        with h5py.File(path, "r") as hf:
            self.assertEqual(hf.attrs.get("format_version", None), 1)

            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    found[name] = (obj.shape, obj.dtype, obj.attrs["state_dict_key"])

            hf["model"].visititems(visit)
        self.assertEqual({k: v[0] for k, v in found.items()}, {
            "relations/0/operator/rhs/linear_transformation": (6, 6),
            "relations/0/operator/rhs/translation": (6,),
            "relations/1/operator/rhs/real": (3,),
            "relations/1/operator/rhs/imag": (3,),
            "entities/user/global_embedding": (6,),
            "entities/item/global_embedding": (6,),
        })
        for name, (shape, dtype, key) in found.items():
            m = PUBLIC.match(name)
            self.assertIsNotNone(m, name)
            self.assertEqual(dtype, np.float32)
            key = key.decode() if isinstance(key, bytes) else key
            want = ("%s_operators.%s.%s" % (m.group(3), m.group(2), m.group(4)) if m.group(2)
                    else "global_embs.emb_%s" % m.group(5))
            self.assertEqual(key, want)

    def test_scores_match_eval(self):
        tools = os.path.join(REPO, "python", "tools")
        out = subprocess.run([sys.executable, os.path.join(tools, "score_pbg.py"), self.out, os.path.join(self.d, "test.txt"),
                              "--filter", os.path.join(self.d, "train.txt")],
                             check=True, stdout=subprocess.PIPE).stdout
        got = json.loads(out)
        self.assertEqual((got["count"], got["unknown"]), (self.eval["count"], self.eval["unknown"]))
        self.assertGreater(got["count"], 0)
        for k in ("mrr", "hits@1", "hits@10", "mean_rank"):  # means: summed in another order
            self.assertAlmostEqual(got[k], self.eval[k], places=12, msg=k)


IMPORT_CONFIG = """entity_path = "{d}/store/ent"
edge_paths = ["{d}/store/train"]
checkpoint_path = "{d}/store/ckpt"
dimension = 4
num_epochs = 1
batch_size = 5
num_batch_negs = 5
num_uniform_negs = 5
eval_fraction = 0
workers = 1

[entities.node]
num_partitions = 3

[[relations]]
name = "links"
lhs = "node"
rhs = "node"
operator = "translation"

[[relations]]
name = "cites"
lhs = "node"
rhs = "node"
"""


@unittest.skipUnless(h5py, "python3-h5py is absent (apt-get install python3-h5py): PBG data import not checked")
class ImportPBGTest(unittest.TestCase):
    """h5py writes PBG's data directory as PBG's importer does (resizable
    chunked int64 datasets, an int64 weight column, no file for an empty
    bucket); batchprep imports it with --from pbg and trains on it; the
    export lists PBG's entities in PBG's partition and offset order."""

    def test_import_train_export(self):
        with tempfile.TemporaryDirectory() as d:
            pbg = os.path.join(d, "pbg")
            os.makedirs(os.path.join(pbg, "edges"))
            rng = np.random.default_rng(7)
            names = [["n%d_%d" % (p, i) for i in range(4 + p)] for p in range(3)]
            for p, ns in enumerate(names):
                with open(os.path.join(pbg, "entity_count_node_%d.txt" % p), "w") as f:
                    f.write("%d\n" % len(ns))
                with open(os.path.join(pbg, "entity_names_node_%d.json" % p), "w") as f:
                    json.dump(ns, f, indent=4)
            want = {}
            for l in range(3):
                for r in range(3):
                    if (l, r) == (2, 0):
                        continue  # empty bucket: no file
                    n = int(rng.integers(1, 9))
                    cols = {"lhs": rng.integers(0, len(names[l]), n), "rhs": rng.integers(0, len(names[r]), n),
                            "rel": rng.integers(0, 2, n), "weight": rng.integers(1, 4, n)}
                    with h5py.File(os.path.join(pbg, "edges", "edges_%d_%d.h5" % (l, r)), "w") as hf:
                        hf.attrs["format_version"] = 1
                        for k, v in cols.items():
                            ds = hf.create_dataset(k, shape=(0,), maxshape=(None,), chunks=(3,), dtype=np.int64)
                            ds.resize((n,))
                            ds[:] = v
                    want[(l, r)] = cols
            cfg = os.path.join(d, "c.toml")
            with open(cfg, "w") as f:
                f.write(IMPORT_CONFIG.format(d=d))
            run = lambda *a: subprocess.run([binary()] + list(a), check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out = run("import", "--config", cfg, "--from", "pbg", pbg, os.path.join(pbg, "edges")).stderr.decode()
            total = sum(len(c["rel"]) for c in want.values())
            self.assertIn("import: %d edges in 1 edge sets from PBG's files, entities: node 15" % total, out)
            self.assertIn("(8 of 9 bucket files present, weights true)", out)
            run("train", "--quiet", "--config", cfg)
            tsv = run("export", "--config", cfg).stdout.decode().splitlines()
            exported = [l.split("\t")[1] for l in tsv if l.startswith("node\t")]
            self.assertEqual(exported, [n for ns in names for n in ns])
            # Every edge, by name, is known to eval (offsets were kept).
            edges = os.path.join(d, "edges.txt")
            rels = ["links", "cites"]
            with open(edges, "w") as f:
                for (l, r), c in want.items():
                    for a, b, rel in zip(c["lhs"], c["rhs"], c["rel"]):
                        f.write("%s\t%s\t%s\n" % (names[l][a], rels[rel], names[r][b]))
            rep = json.loads(run("eval", "--config", cfg, "--edges", edges, "--rel-col", "1", "--format", "json").stdout)
            self.assertEqual((rep["count"], rep["unknown"]), (2 * total, 0))


if __name__ == "__main__":
    unittest.main()
