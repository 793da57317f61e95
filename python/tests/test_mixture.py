"""Mixtures of corpora in the Python client: the minibatches of
`batchprep read --mix` (docs/mixtures.md), each sequence's corpus with it."""

import os
import pickle
import tempfile
import unittest

import numpy as np

import batchprep
from batchprep import BatchprepError
from batchprep import batchprep_pb2 as pb
from batchprep.minibatch import from_columns
from batchprep.request import corpus_files

from .helpers import binary, read_jsonl, write_corpus

STREAMS = ["x:2", "y:7:sparse"]


def write_corpus_b(path, n, bad=()):
    """Unlike write_corpus, so that data tells the corpus: sequence i has
    1 + i%3 lines, id 5000+i; line j: x = [1000+i, j], y = {(i+j)%7: i+0.5}.
    Sequences in bad get an unparsable x."""
    with open(path, "w") as f:
        for i in range(n):
            for j in range(1 + i % 3):
                x = "q" if j == 0 and i in bad else str(1000 + i)
                f.write("%d |x %s %d |y %d:%g\n" % (5000 + i, x, j, (i + j) % 7, i + 0.5))


def as_line(mb):
    line = {"step": mb.step, "epoch": mb.epoch, "sweep": mb.sweep, "start": mb.start, "end": mb.end,
            "end_of_sweep": mb.end_of_sweep, "end_of_epoch": mb.end_of_epoch,
            "sequences": mb.sequences.tolist(), "corpus": mb.corpus.tolist(), "ids": mb.ids, "samples": mb.samples}
    if mb.skipped:
        line["skipped"], line["skipped_corpus"] = mb.skipped, mb.skipped_corpus
    return line


def mix_flags(pairs, streams=STREAMS):
    out = []
    for path, w in pairs:
        out += ["--mix", "%s=%s" % (path, w)]
    for s in streams:
        out += ["--stream", s]
    return out


class MixtureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        cls.dir = tempfile.mkdtemp()
        cls.a, cls.b = os.path.join(cls.dir, "a.ctf"), os.path.join(cls.dir, "b.ctf")
        write_corpus(cls.a, 41)
        write_corpus_b(cls.b, 23)

    def check_data(self, mb, paths):
        x, (indptr, indices, _) = mb["x"], mb["y"]
        row = 0
        for i, c in zip(mb.sequences.tolist(), mb.corpus.tolist()):
            n, base = (1 + i % 3, 1000) if paths[c] == self.b else (1 + i % 4, 0)
            for j in range(n):
                self.assertEqual(x[row].tolist(), [base + i, j])
                self.assertEqual(indices[indptr[row]], (i + j) % 7)
                row += 1
        self.assertEqual(row, x.shape[0])

    def test_equals_read_mix(self):
        # Python = CLI: sequences, corpus, ids and counts of every minibatch,
        # and each corpus's data, for the mixture's forms and settings.
        cases = [
            ({self.a: 0.7, self.b: 0.3}, [(self.a, "0.7"), (self.b, "0.3")], dict(mb="9", seed=3, epochs=2, chunk_sequences=5),
             ["--mb", "9", "--seed", "3", "--epochs", "2", "--chunk-sequences", "5"]),
            ([(self.b, "samples:30"), (self.a, "samples:12"), (self.b, "samples:6")],
             [(self.b, "samples:30"), (self.a, "samples:12"), (self.b, "samples:6")],
             dict(mb="3*2:11", randomize="cntk", epoch_size=48, epochs=3, window_samples=30, chunk_sequences=4),
             ["--mb", "3*2:11", "--randomize", "cntk", "--epoch-size", "48", "--epochs", "3", "--window-samples", "30",
              "--chunk-sequences", "4"]),
            ([(self.a, 1), (self.b, 2.5)], [(self.a, "1"), (self.b, "2.5")],
             dict(mb="10", workers=3, rank=2, randomize="none", cut_at_sweep=True, epoch_size="inf", max_minibatches=25, start=40),
             ["--mb", "10", "--workers", "3", "--rank", "2", "--randomize", "none", "--cut-at-sweep", "--epoch-size", "inf",
              "--max-minibatches", "25", "--start", "40"]),
            ({self.a: 0.5, self.b: 0.5}, [(self.a, "0.5"), (self.b, "0.5")],
             dict(mb="9", workers=2, rank=1, split="chunks", chunk_sequences=4, epochs=2),
             ["--mb", "9", "--workers", "2", "--rank", "1", "--split", "chunks", "--chunk-sequences", "4", "--epochs", "2"]),
        ]
        for files, pairs, kw, args in cases:
            with self.subTest(kw=kw):
                want = read_jsonl(mix_flags(pairs) + args)
                with batchprep.read(files, streams=STREAMS, **kw) as it:
                    mbs = list(it)
                self.assertTrue(want)
                self.assertEqual([as_line(mb) for mb in mbs], want)
                for mb in mbs:
                    self.assertEqual(mb.corpus.dtype, np.int32)
                    self.check_data(mb, [p for p, _ in pairs])
                self.assertEqual(set(np.concatenate([mb.corpus for mb in mbs]).tolist()), set(range(len(pairs))))

    def test_resume_through_state(self):
        # Every minibatch's state resumes the rest of the mixture's stream,
        # through read(), MinibatchSource and SequenceDataset's state_dict.
        files = {self.a: 0.6, self.b: 0.4}
        kw = dict(streams=STREAMS, mb="6", seed=9, epochs=2, chunk_sequences=6, window_chunks=2)
        full = [as_line(mb) | {"state": mb.state} for mb in batchprep.read(files, **kw)]
        self.assertIn('"mix1.weight": "2/5"', str(full[0]["state"]).replace("'", '"'))
        for i in (0, 3, len(full) // 2, len(full) - 2):
            rest = [as_line(mb) | {"state": mb.state} for mb in batchprep.read(files, state=full[i]["state"], **kw)]
            self.assertEqual(rest, full[i + 1:])
        with batchprep.MinibatchSource(files, streams=STREAMS, seed=9, chunk_sequences=6, window_chunks=2) as src:
            src.restore(full[4]["state"])
            self.assertEqual(as_line(src.next_minibatch(6)), {k: v for k, v in full[5].items() if k != "state"})
        with self.assertRaisesRegex(BatchprepError, "mix0.weight"):
            list(batchprep.read({self.a: 0.5, self.b: 0.5}, state=full[3]["state"], **kw))

    def test_dataset_state_dict(self):
        from batchprep.torch import SequenceDataset
        files = [(self.a, 0.5), (self.b, 0.5)]
        ds = SequenceDataset(files, STREAMS, rank=0, workers=1, mb="8", seed=2, epochs=3)
        first = [as_line(mb) for mb in ds]
        sd = ds.state_dict()
        second = [as_line(mb) for mb in ds]
        again = SequenceDataset(files, STREAMS, rank=0, workers=1, mb="8", seed=2, epochs=3)
        again.load_state_dict(sd)
        self.assertEqual([as_line(mb) for mb in again], second)
        whole = read_jsonl(mix_flags([(self.a, "0.5"), (self.b, "0.5")]) + ["--mb", "8", "--seed", "2", "--epochs", "2"])
        self.assertEqual(first + second, whole)

    def test_single_corpus_has_no_corpus(self):
        mb = next(iter(batchprep.read(self.a, streams=STREAMS, mb="5")))
        self.assertIsNone(mb.corpus)
        self.assertIsNone(mb.skipped_corpus)

    def test_skipped_and_pickled(self):
        bad = os.path.join(self.dir, "bad.ctf")
        write_corpus_b(bad, 20, bad={3, 11})
        pairs = [(self.a, "1"), (bad, "1")]
        want = read_jsonl(mix_flags(pairs) + ["--mb", "7", "--max-errors", "5"])
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", batchprep.BatchprepWarning)
            mbs = list(batchprep.read(pairs, streams=STREAMS, mb="7", max_errors=5))
        self.assertEqual([as_line(mb) for mb in mbs], want)
        skipped = sum((mb.skipped_corpus for mb in mbs), [])
        self.assertTrue(skipped)
        self.assertEqual(set(skipped), {1})
        for mb in mbs:
            back = pickle.loads(pickle.dumps(mb))
            self.assertEqual(as_line(back), as_line(mb))
            self.assertEqual(back["x"].tolist(), mb["x"].tolist())

    def test_files_forms_and_refusals(self):
        self.assertEqual(corpus_files("a.ctf"), (["a.ctf"], []))
        self.assertEqual(corpus_files(["a.ctf"]), (["a.ctf"], []))
        self.assertEqual(corpus_files({"a": 0.7, "b": 3}), (["a", "b"], ["0.7", "3"]))
        self.assertEqual(corpus_files([("a", 1e-7), ("a", "samples:5")]), (["a", "a"], ["0.0000001", "samples:5"]))
        self.assertEqual(corpus_files({"a": np.float64(0.7), "b": np.int64(3)}), (["a", "b"], ["0.7", "3"]))
        for files, error in (({"a": 0}, ValueError), ({"a": -1.5}, ValueError), ({"a": float("nan")}, ValueError),
                             ({"a": True}, TypeError), ({"a": None}, TypeError), ([("a", 1), "b"], TypeError), ({}, ValueError)):
            with self.subTest(files=files), self.assertRaisesRegex(error, "files"):
                corpus_files(files)
        with self.assertRaisesRegex(BatchprepError, r"weights\[1\]"):
            list(batchprep.read({self.a: 0.5, self.b: "half"}, streams=STREAMS))
        with self.assertRaisesRegex(BatchprepError, "weights: "):
            list(batchprep.read({self.a: 0.5, self.b: "samples:4"}, streams=STREAMS))

    def test_columns_with_corpora_checked(self):
        # The decoder of a mixture's columns: the corpus array follows the
        # sequences, and a message whose arrays lack it is refused.
        streams = [("x", 2, False)]
        row = [0, 0, 0, 0, 1, 0, 1, 24, 2] + [1, 0, 0]  # one sequence: 8 + 4 (corpus) + 4 + 8 bytes, padded
        arrays = np.array([7], dtype="<i8").tobytes() + np.array([1, 1], dtype="<i4").tobytes() + np.array([5, 6], dtype="<f4").tobytes()
        msg = pb.SequenceGroup(table=np.array(row, dtype="<u8").tobytes(), arrays=arrays, ids=b"7", states=b"{}")
        (mb,) = from_columns(msg, streams, b"", corpora=2)
        self.assertEqual((mb.sequences.tolist(), mb.corpus.tolist(), mb["x"].tolist()), ([7], [1], [[5.0, 6.0]]))
        rng = np.random.default_rng(5)
        for _ in range(300):  # cut or garbled messages: a ValueError, never another exception or a crash
            table = bytearray(msg.table)
            table[int(rng.integers(len(table)))] = int(rng.integers(256))
            data = bytes(arrays[:int(rng.integers(len(arrays) + 1))])
            try:
                for mb in from_columns(pb.SequenceGroup(table=bytes(table), arrays=data, ids=b"7", states=b"{}"),
                                       streams, b"", corpora=2):
                    mb.corpus, mb["x"]
            except ValueError:
                pass


if __name__ == "__main__":
    unittest.main()
