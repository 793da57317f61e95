"""SPEC C1 against a real `batchprep serve` (started by the client)."""

import ast
import os
import tempfile
import threading
import unittest
import warnings
from unittest import mock

import numpy as np

import batchprep
from batchprep import BatchprepError

from .helpers import SHARED, binary, read_jsonl, write_corpus, write_one_sample_corpus

STREAMS = ["x:2", "y:7:sparse"]


def as_line(mb):
    return {"step": mb.step, "epoch": mb.epoch, "sweep": mb.sweep, "start": mb.start, "end": mb.end,
            "end_of_sweep": mb.end_of_sweep, "end_of_epoch": mb.end_of_epoch,
            "sequences": mb.sequences.tolist(), "ids": mb.ids, "samples": mb.samples}


def flags(streams):
    out = []
    for s in streams:
        out += ["--stream", s]
    return out


class ReadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        cls.dir = tempfile.mkdtemp()
        cls.corpus = os.path.join(cls.dir, "c.ctf")
        write_corpus(cls.corpus, 47)
        cls.one = os.path.join(cls.dir, "one.ctf")
        write_one_sample_corpus(cls.one, 40)

    def test_equals_read_jsonl(self):
        cases = [
            ({}, []),
            (dict(mb="7", seed=3, epochs=3, chunk_sequences=5, window_chunks=2),
             ["--mb", "7", "--seed", "3", "--epochs", "3", "--chunk-sequences", "5", "--window-chunks", "2"]),
            (dict(mb="3*2:11", randomize="cntk", epochs=4, window_samples=30, chunk_sequences=4),
             ["--mb", "3*2:11", "--randomize", "cntk", "--epochs", "4", "--window-samples", "30", "--chunk-sequences", "4"]),
            (dict(mb="9", workers=3, rank=2, randomize="none", cut_at_sweep=True, epoch_size="inf", max_minibatches=30),
             ["--mb", "9", "--workers", "3", "--rank", "2", "--randomize", "none", "--cut-at-sweep",
              "--epoch-size", "inf", "--max-minibatches", "30"]),
            (dict(mb="10", epoch_size="25", epochs=4, start=33, chunk_bytes=200),
             ["--mb", "10", "--epoch-size", "25", "--epochs", "4", "--start", "33", "--chunk-bytes", "200"]),
            (dict(mb="12", workers=3, rank=1, split="chunks", chunk_sequences=3, window_chunks=4, epochs=2),
             ["--mb", "12", "--workers", "3", "--rank", "1", "--split", "chunks", "--chunk-sequences", "3",
              "--window-chunks", "4", "--epochs", "2"]),
        ]
        for kw, args in cases:
            with self.subTest(kw=kw):
                want = read_jsonl([self.corpus] + flags(STREAMS) + args)
                with batchprep.read([self.corpus], streams=STREAMS, **kw) as it:
                    got = [as_line(mb) for mb in it]
                self.assertTrue(want)
                self.assertEqual(got, want)

    def test_arrays(self):
        for mb in batchprep.read([self.corpus], streams=STREAMS, mb="13", seed=1):
            x = mb["x"]
            indptr, indices, values = mb["y"]
            self.assertEqual(x.dtype, np.float32)
            self.assertEqual(x.shape, (int(mb.lengths["x"].sum()), 2))
            self.assertEqual(len(indptr), x.shape[0] + 1)
            row = 0
            for s, i in enumerate(mb.sequences):
                n = 1 + i % 4
                self.assertEqual(mb.lengths["x"][s], n)
                self.assertEqual(mb.ids[s], str(100 + i))
                for j in range(n):
                    self.assertEqual(x[row].tolist(), [i, j])
                    self.assertEqual(indices[indptr[row]:indptr[row + 1]].tolist(), [(i + j) % 7])
                    self.assertEqual(values[indptr[row]], np.float32(i + 0.5))
                    row += 1

    def test_one_hot_rebuilt(self):
        # The client asks the server to leave out one-entry row offsets and
        # values of 1 (elide_unit_sparse); the arrays must be as if sent.
        path = os.path.join(self.dir, "onehot.ctf")
        with open(path, "w") as f:
            for i in range(30):
                for j in range(1 + i % 3):
                    f.write("%d |w %d:1 |v %d:2\n" % (i, (i + j) % 9, j))
        for mb in batchprep.read([path], streams=["w:9:sparse", "v:3:sparse"], mb="5"):
            (wp, wi, wv), (vp, vi, vv) = mb["w"], mb["v"]
            n = len(wi)
            self.assertEqual(wp.tolist(), list(range(n + 1)))
            self.assertEqual(wv.tolist(), [1.0] * n)
            self.assertEqual(vp.tolist(), list(range(n + 1)))
            self.assertEqual(vv.tolist(), [2.0] * n)
            want_w, want_v = [], []
            for s in mb.sequences:
                want_w += [(s + j) % 9 for j in range(1 + s % 3)]
                want_v += list(range(1 + s % 3))
            self.assertEqual(wi.tolist(), want_w)
            self.assertEqual(vi.tolist(), want_v)
            self.assertFalse(wv.flags.writeable)

    def test_state_round_trip(self):
        kw = dict(streams=STREAMS, mb="6", seed=9, epochs=2, chunk_sequences=6, window_chunks=2)
        full = [as_line(mb) | {"state": mb.state} for mb in batchprep.read([self.corpus], **kw)]
        for i in (0, 5, len(full) // 2, len(full) - 2):
            rest = [as_line(mb) | {"state": mb.state} for mb in batchprep.read([self.corpus], state=full[i]["state"], **kw)]
            self.assertEqual(rest, full[i + 1:])

    def test_minibatch_source(self):
        # Two next_minibatch(K) equal one next_minibatch(2K) on one-sample sequences (SPEC A3.2).
        a = batchprep.MinibatchSource([self.one], streams=["x:1"], seed=4)
        b = batchprep.MinibatchSource([self.one], streams=["x:1"], seed=4)
        try:
            for _ in range(12):
                big = b.next_minibatch(6)
                halves = np.concatenate([a.next_minibatch(3).sequences, a.next_minibatch(3).sequences])
                self.assertEqual(big.sequences.tolist(), halves.tolist())
            # Any sizes give the same order; restore resumes after the state.
            st = a.state
            seq = [a.next_minibatch(k).sequences.tolist() for k in (1, 5, 2, 7)]
            a.restore(st)
            self.assertEqual(sum([a.next_minibatch(k).sequences.tolist() for k in (15,)], []), sum(seq, []))
        finally:
            a.close()
            b.close()

    def test_minibatch_source_rank(self):
        want = read_jsonl([self.corpus] + flags(STREAMS) + ["--mb", "20", "--workers", "2", "--rank", "1", "--max-minibatches", "5"])
        with batchprep.MinibatchSource([self.corpus], streams=STREAMS, workers=2, rank=1) as src:
            got = [as_line(src.next_minibatch(20)) for _ in range(5)]
        self.assertEqual(got, want)

    def test_bad_request_names_field(self):
        with self.assertRaises(BatchprepError) as cm:
            list(batchprep.read([self.corpus], streams=STREAMS, randomize="shuffle"))
        self.assertIn("randomize", str(cm.exception))
        with self.assertRaises(BatchprepError) as cm:
            list(batchprep.read([self.corpus + ".missing"], streams=STREAMS))
        self.assertIn("files", str(cm.exception))

    def test_local_server_stops_on_close(self):
        it = batchprep.read([self.corpus], streams=STREAMS, epoch_size="inf")
        next(it)
        proc = it._conn.server._proc
        self.assertIsNone(proc.poll())
        it.close()
        self.assertIsNotNone(proc.poll())

    def test_integers_out_of_range(self):
        # The server's limits, checked before any call, naming the argument.
        cases = [(dict(seed=-1), "seed"), (dict(seed=2**64), "seed"), (dict(epochs=2**31), "epochs"),
                 (dict(epochs=0), "epochs"), (dict(workers=0), "workers"), (dict(workers=2, rank=2), "rank"), (dict(split="x"), "split"),
                 (dict(max_errors=-1), "max_errors"), (dict(chunk_bytes=2**63), "chunk_bytes"),
                 (dict(window_chunks=2**31), "window_chunks"), (dict(start=-5), "start"),
                 (dict(group_bytes=(64 << 20) + 1), "group_bytes"), (dict(max_minibatches=-1), "max_minibatches")]
        for kw, name in cases:
            with self.subTest(kw=kw):
                with self.assertRaisesRegex(ValueError, "^%s " % name):
                    batchprep.read([self.corpus], streams=STREAMS, address="127.0.0.1:1", **kw)
        with self.assertRaisesRegex(TypeError, "^seed 1.5: want an integer"):
            batchprep.read([self.corpus], streams=STREAMS, address="127.0.0.1:1", seed=1.5)
        with batchprep.MinibatchSource([self.one], streams=["x:1"]) as src:
            for k in (2**31, 0, -1):
                with self.assertRaisesRegex(ValueError, "^k "):
                    src.next_minibatch(k)
            # In Python's range, but past the private server's default cap
            # on samples per minibatch (serve --max-minibatch-samples): the
            # server refuses it, naming the limit.
            with self.assertRaisesRegex(batchprep.BatchprepError, "max-minibatch-samples"):
                src.next_minibatch(2**31 - 1)
        with batchprep.MinibatchSource([self.one], streams=["x:1"]) as src:
            self.assertEqual(len(src.next_minibatch(1 << 20).sequences), 40)
        with self.assertRaisesRegex(ValueError, "^seed "):
            batchprep.MinibatchSource([self.one], streams=["x:1"], seed=-1)
        with self.assertRaisesRegex(ValueError, "^worker "):
            next(batchprep.read_graph("g.toml", worker=2**31, address="127.0.0.1:1"))

    def test_minibatch_source_refuses_ignored_keywords(self):
        for kw in (dict(mb="64"), dict(max_minibatches=3), dict(k=4)):
            with self.subTest(kw=kw):
                with self.assertRaisesRegex(TypeError, "next_minibatch"):
                    batchprep.MinibatchSource([self.one], streams=["x:1"], **kw)

    def test_nothing_to_read_explains_itself(self):
        with self.assertWarnsRegex(batchprep.BatchprepWarning, "start 500 .*epochs=1"):
            self.assertEqual(list(batchprep.read([self.corpus], streams=STREAMS, start=500)), [])
        last = list(batchprep.read([self.corpus], streams=STREAMS, epochs=2))[-1].state
        with self.assertWarnsRegex(batchprep.BatchprepWarning, "epoch 2 .*epochs=2 ends before it; ask for epochs=3"):
            self.assertEqual(list(batchprep.read([self.corpus], streams=STREAMS, epochs=2, state=last)), [])

    def test_warnings_reach_python(self):
        path = os.path.join(self.dir, "warn.ctf")
        with open(path, "w") as f:
            for i in range(12):
                f.write("%d |x %s 1 |y 1:1 |extra 3\n" % (i, "q" if i == 7 else i))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mbs = list(batchprep.read([path], streams=STREAMS, mb="4", max_errors=1))
        got = [str(w.message) for w in caught if w.category is batchprep.BatchprepWarning]
        self.assertEqual(len(got), 2, got)
        self.assertTrue(any('stream "extra" is not configured' in g and "warn.ctf:1:" in g for g in got), got)
        self.assertTrue(any("warn.ctf:8:" in g for g in got), got)
        self.assertEqual(sum((mb.skipped for mb in mbs), []), [7])

    def test_minibatches_of_a_message_share_one_buffer(self):
        # The client asks for columns: a message's minibatches are rows of
        # one table and their arrays views of one buffer, not a protobuf
        # message each.
        mbs = list(batchprep.read([self.corpus], streams=STREAMS, mb="5", seed=2))
        self.assertGreater(len(mbs), 10)
        bases = {id(mb.sequences.base) for mb in mbs}
        self.assertLess(len(bases), len(mbs) // 2, "one buffer per minibatch: columns are not used")
        for mb in mbs[:6]:
            self.assertIs(mb["x"].base, mb.sequences.base)

    @unittest.skipUnless(batchprep.shared.usable(), "shared memory is for Linux x86-64")
    def test_private_server_shares_memory(self):
        # With its private server the client takes the arrays from shared
        # memory; the minibatches are those of the arrays sent inline.
        def drain(shared):
            with batchprep.read([self.corpus], streams=STREAMS, mb="5", seed=4, epochs=3, group_bytes=300) as it:
                out = []
                for mb in it:
                    out.append(as_line(mb) | {"x": mb["x"].tolist(), "y": [a.tolist() for a in mb["y"]],
                                              "state": mb.state})
                    if len(out) == 1 and shared:
                        self.assertIsNotNone(it._ring)
                        self.assertTrue(it._ring._size)
                        self.assertFalse(mb["x"].flags.writeable)
                return out, it._ring
        shared, _ = drain(True)
        with mock.patch.dict(os.environ, {"BATCHPREP_SHARED_MEMORY": "0"}):
            inline, ring = drain(False)
        self.assertIsNone(ring)
        self.assertGreater(len(shared), 20)
        self.assertEqual(shared, inline)

    @unittest.skipUnless(batchprep.shared.usable(), "shared memory is for Linux x86-64")
    def test_stream_read_on_calling_thread(self):
        # With shared memory the client reads its stream on the iterating
        # thread: no polling thread to hand each message over (a tenth of
        # the client's CPU).
        before = set(threading.enumerate())
        with batchprep.read([self.corpus], streams=STREAMS, mb="3") as it:
            next(it)
            started = [t.name for t in set(threading.enumerate()) - before]
        self.assertEqual(started, [])

    def test_columns_message_checked(self):
        from batchprep import batchprep_pb2 as pb
        from batchprep.minibatch import from_columns
        streams = [("x", 2, False)]
        row = [0, 0, 0, 0, 1, 0, 1, 24, 2] + [1, 0, 0]  # one sequence of one sample: 8 + 4 + 8 bytes, padded
        good = pb.SequenceGroup(table=np.array(row, dtype="<u8").tobytes(), arrays=bytes(24), ids=b"7", states=b"{}")
        (mb,) = from_columns(good, streams, b"")
        self.assertEqual((mb.ids, mb["x"].shape, mb.state_bytes), (["7"], (1, 2), b"{}"))
        for bad in (pb.SequenceGroup(table=good.table, arrays=bytes(16), states=b"{}"),   # arrays short
                    pb.SequenceGroup(table=good.table[:-8], arrays=bytes(24), states=b"{}"),  # a row cut
                    pb.SequenceGroup(table=good.table, arrays=bytes(24), states=b"{"),  # states short
                    pb.SequenceGroup(arrays=bytes(24))):  # no table
            with self.assertRaises(ValueError):
                from_columns(bad, streams, b"")
        with self.assertRaisesRegex(ValueError, "without columns: it predates this client"):
            from_columns(pb.SequenceGroup(minibatches=[pb.SequenceMinibatch(step=1)]), streams, b"")
        row[9] = 3  # three samples of x do not fit in 24 bytes
        (mb,) = from_columns(pb.SequenceGroup(table=np.array(row, dtype="<u8").tobytes(), arrays=bytes(24),
                                              ids=b"7", states=b"{}"), streams, b"")
        with self.assertRaisesRegex(ValueError, "its counts"):
            mb["x"]

    def test_no_binary_says_how_to_get_one(self):
        env = {k: v for k, v in os.environ.items() if k != "BATCHPREP_BIN"}
        env["PATH"] = self.dir
        with mock.patch.dict(os.environ, env, clear=True):
            with self.assertRaisesRegex(FileNotFoundError, r"go install \./cmd/batchprep.*BATCHPREP_BIN"):
                batchprep.read([self.corpus], streams=STREAMS)
        with mock.patch.dict(os.environ, {"BATCHPREP_BIN": self.corpus + ".nope"}):
            with self.assertRaisesRegex(FileNotFoundError, "BATCHPREP_BIN=.*not an executable"):
                batchprep.read([self.corpus], streams=STREAMS)

    def test_names_at_top_level(self):
        self.assertIs(batchprep.BatchprepError, BatchprepError)
        for name in batchprep.__all__:
            self.assertTrue(getattr(batchprep, name).__doc__, name)
        here = os.path.dirname(batchprep.__file__)
        self.assertTrue(os.path.exists(os.path.join(here, "py.typed")))
        # No import cycle inside the package (imports inside functions count too).
        deps = {}
        for name in os.listdir(here):
            if name.endswith(".py") and name != "__init__.py":
                with open(os.path.join(here, name)) as f:
                    tree = ast.parse(f.read())
                deps[name[:-3]] = {n.module for n in ast.walk(tree)
                                   if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}
        done = set()

        def visit(m, path):
            self.assertNotIn(m, path, "import cycle: %s" % " -> ".join(path + [m]))
            if m not in done:
                for d in deps.get(m, ()):
                    visit(d, path + [m])
                done.add(m)
        for m in deps:
            visit(m, [])

    @unittest.skipUnless(os.path.exists(os.path.join(SHARED, "ctf", "atis", "atis.train.ctf")), "../shared/data/ctf/atis absent")
    def test_atis(self):
        atis = os.path.join(SHARED, "ctf", "atis", "atis.train.ctf")
        streams = ["S0:943:sparse", "S2:129:sparse"]
        want = read_jsonl([atis] + flags(streams) + ["--mb", "256", "--workers", "2", "--rank", "0"])
        got = [as_line(mb) for mb in batchprep.read([atis], streams=streams, mb="256", workers=2, rank=0)]
        self.assertEqual(got, want)

    @unittest.skipUnless(os.path.exists(os.path.join(SHARED, "ctf", "atis", "atis.train.ctf")), "../shared/data/ctf/atis absent")
    def test_atis_chunk_sequences(self):
        # The server's window limit counts ATIS's real chunks (a few KB
        # each), not 32 MiB per chunk: `batchprep read` and the client agree.
        atis = os.path.join(SHARED, "ctf", "atis", "atis.train.ctf")
        streams = ["S0:943:sparse", "S2:129:sparse"]
        want = read_jsonl([atis] + flags(streams) + ["--mb", "256", "--chunk-sequences", "10"])
        got = [as_line(mb) for mb in batchprep.read([atis], streams=streams, mb="256", chunk_sequences=10)]
        self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
