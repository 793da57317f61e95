"""A Parquet corpus (written by `batchprep convert`) read through the client
gives what the CTF corpus gives."""

import os
import subprocess
import tempfile
import unittest

import batchprep

from .helpers import binary, read_jsonl, write_corpus

STREAMS = ["x:2", "y:7:sparse"]


class ParquetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        cls.dir = tempfile.mkdtemp()
        cls.ctf = os.path.join(cls.dir, "c.ctf")
        write_corpus(cls.ctf, 47)
        cls.parquet = os.path.join(cls.dir, "c.parquet")
        args = [binary(), "convert", cls.ctf, cls.parquet, "--row-group-rows", "10"]
        for s in STREAMS:
            args += ["--stream", s]
        subprocess.run(args, check=True, stderr=subprocess.DEVNULL)

    def test_same_minibatches_and_arrays(self):
        kw = dict(mb="7", seed=3, epochs=2, chunk_sequences=5, window_chunks=2)
        flags = ["--mb", "7", "--seed", "3", "--epochs", "2", "--chunk-sequences", "5", "--window-chunks", "2"]
        for s in STREAMS:
            flags += ["--stream", s]
        self.assertEqual(read_jsonl([self.parquet] + flags), read_jsonl([self.ctf] + flags))
        got = list(batchprep.read([self.parquet], streams=STREAMS, **kw))
        want = list(batchprep.read([self.ctf], streams=STREAMS, **kw))
        self.assertTrue(want)
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual(g.sequences.tolist(), w.sequences.tolist())
            self.assertEqual(g.ids, w.ids)
            self.assertEqual(g["x"].tolist(), w["x"].tolist())
            for a, b in zip(g["y"], w["y"]):
                self.assertEqual(a.tolist(), b.tolist())


if __name__ == "__main__":
    unittest.main()
