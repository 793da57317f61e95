"""SequenceDataset over many epochs as PyTorch loops use it: persistent
DataLoader workers, and len() for progress bars."""

import contextlib
import json
import os
import re
import tempfile
import unittest

from .helpers import binary, read_jsonl, write_corpus, write_one_sample_corpus

try:
    import torch
    from torch.utils.data import DataLoader

    from batchprep.torch import SequenceDataset
except ImportError:  # pragma: no cover
    torch = None

STREAMS = ["x:2", "y:7:sparse"]


class CorpusCase(unittest.TestCase):
    """A 40-sequence corpus and datasets over it (mb 7, seed 3, 3 epochs)."""

    @classmethod
    def setUpClass(cls):
        binary()
        cls.corpus = os.path.join(tempfile.mkdtemp(), "c.ctf")
        write_corpus(cls.corpus, 40)

    def dataset(self, **kw):
        kw = dict(dict(rank=0, workers=1, mb="7", seed=3, epochs=3), **kw)
        return SequenceDataset([self.corpus], STREAMS, **kw)


@unittest.skipIf(torch is None, "python3-torch absent")
class PersistentWorkersTest(CorpusCase):

    def epochs(self, loader, n):
        return [[mb.sequences.tolist() for mb in loader] for _ in range(n)]

    def test_three_epochs_equal_num_workers_0(self):
        want = self.epochs(DataLoader(self.dataset(), batch_size=None, num_workers=0), 3)
        self.assertEqual(len(want), 3)
        ds = self.dataset()
        loader = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
        got = []
        for _ in range(3):
            got.append([])
            for mb in loader:
                got[-1].append(mb.sequences.tolist())
                self.assertEqual(ds.state_dict()["state"], mb.state)
        self.assertEqual(got, want)
        self.assertEqual(ds.state_dict()["state"]["epoch"], 3)
        with self.assertRaisesRegex(RuntimeError, "epochs=3"):
            list(loader)

    def test_left_early_and_loaded_state(self):
        # The workers stay, and run ahead of the loop: a loop left early
        # continues at the next minibatch it did not receive, and a state
        # loaded in the training process is where the next iteration starts.
        # The forkserver context: the workers' parent is the fork server,
        # not the training process they hand items to.
        want = self.epochs(DataLoader(self.dataset(), batch_size=None, num_workers=0), 3)
        for context in ("fork", "forkserver"):
            with self.subTest(context=context):
                ds = self.dataset()
                loader = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True,
                                    multiprocessing_context=context)
                got = []
                for stop in (0, 3):  # 0: left while the loader holds items back in its reorder buffer
                    for i, mb in enumerate(loader):
                        got.append(mb.sequences.tolist())
                        if i == stop:
                            break
                saved = json.loads(json.dumps(ds.state_dict()))
                got += [mb.sequences.tolist() for mb in loader]
                self.assertEqual(got, want[0])
                ds.load_state_dict(saved)
                self.assertEqual([mb.sequences.tolist() for mb in loader], want[0][5:])
                self.assertEqual(self.epochs(loader, 2), want[1:])

    def test_from_read_jsonl(self):
        # Rank 1 of 2, with a transform, against `batchprep read`.
        lines = read_jsonl([self.corpus, "--stream", "x:2", "--stream", "y:7:sparse", "--mb", "5", "--seed", "4",
                            "--epochs", "2", "--workers", "2", "--rank", "1"])
        want = [[l["sequences"] for l in lines if l["epoch"] == e] for e in range(2)]
        ds = self.dataset(mb="5", seed=4, epochs=2, workers=2, rank=1, transform=lambda mb: mb.sequences.tolist())
        loader = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
        self.assertEqual([list(loader) for _ in range(2)], want)


@contextlib.contextmanager
def pinning_without_gpu():
    """pin_memory=True as on a GPU machine: torch starts its pinning thread
    only when CUDA is available, so pretend it is, and "pin" a tensor by
    copying it (pinned memory needs CUDA)."""
    cuda = torch.cuda
    saved = cuda.is_available, cuda.current_device, cuda.set_device, torch.Tensor.pin_memory
    cuda.is_available, cuda.current_device, cuda.set_device = (lambda: True), (lambda: 0), (lambda device: None)
    torch.Tensor.pin_memory = lambda self, device=None: self.clone()
    try:
        yield
    finally:
        cuda.is_available, cuda.current_device, cuda.set_device, torch.Tensor.pin_memory = saved


@unittest.skipIf(torch is None, "python3-torch absent")
class PinMemoryTest(CorpusCase):
    """DataLoader(pin_memory=True): items pass through torch's pinning
    thread, ahead of the loop; state_dict() is still the position after the
    last item the loop received."""

    def test_resume_where_the_loop_left(self):
        plain = DataLoader(self.dataset(), batch_size=None)
        want = [[mb.sequences.tolist() for mb in plain] for _ in range(3)]
        for persistent in (False, True):
            for stop in (0, 1, 3, 7):
                with self.subTest(persistent=persistent, stop=stop), pinning_without_gpu():
                    ds = self.dataset()
                    loader = DataLoader(ds, batch_size=None, num_workers=2, pin_memory=True,
                                        persistent_workers=persistent)
                    it = iter(loader)
                    if getattr(it, "_pin_memory_thread", None) is None:
                        self.skipTest("this torch (%s) starts no pinning thread here" % torch.__version__)
                    got = []
                    for i, mb in enumerate(it):
                        got.append(mb.sequences.tolist())
                        self.assertEqual(ds.state_dict()["state"], mb.state)
                        if i == stop:
                            break
                    saved = json.loads(json.dumps(ds.state_dict()))
                    del it
                    if persistent:  # the same loader's next iteration continues
                        got += [mb.sequences.tolist() for mb in loader]
                        self.assertEqual(got, want[0])
                    ds2 = self.dataset()
                    ds2.load_state_dict(saved)
                    loader2 = DataLoader(ds2, batch_size=None, num_workers=2, pin_memory=True)
                    rest = [mb.sequences.tolist() for mb in loader2]
                    self.assertEqual(got[:stop + 1] + rest, want[0])
                    self.assertEqual([[mb.sequences.tolist() for mb in loader2] for _ in range(2)], want[1:])

    def test_transformed_items(self):
        # Tensors, which pinning copies, and the same object for every
        # minibatch: the states still follow the loop item by item.
        for name, transform in (("tensors", lambda mb: {"s": torch.tensor(mb.sequences.tolist())}),
                                ("one object", lambda mb: "same")):
            with self.subTest(transform=name):
                plain = self.dataset(transform=transform)
                want = []
                for item in DataLoader(plain, batch_size=None):
                    want.append((str(item), plain.state_dict()))
                with pinning_without_gpu():
                    ds = self.dataset(transform=transform)
                    got = []
                    for item in DataLoader(ds, batch_size=None, num_workers=2, pin_memory=True):
                        got.append((str(item), ds.state_dict()))
                self.assertEqual(got, want)


def server_reads(pid):
    """The bytes process pid has read so far (/proc/PID/io's rchar)."""
    with open("/proc/%d/io" % pid) as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


@unittest.skipIf(torch is None, "python3-torch absent")
@unittest.skipUnless(os.path.exists("/proc/self/io"), "no /proc/PID/io here")
class ServerKeptTest(unittest.TestCase):
    def test_one_index_pass(self):
        # The process that iterates keeps its server across epochs, so the
        # server's reader cache keeps the index: the first epoch reads the
        # file twice (index pass and sweep), each later one once.
        path = os.path.join(tempfile.mkdtemp(), "c.ctf")
        write_corpus(path, 60000)
        size = os.path.getsize(path)
        ds = SequenceDataset([path], STREAMS, rank=0, workers=1, mb="4096", seed=1, epochs=3)
        loader = DataLoader(ds, batch_size=None)
        reads, servers = [], set()
        for _ in range(3):
            n = sum(1 for _ in loader)
            self.assertGreater(n, 0)
            server = ds._conn.server
            servers.add(server._proc.pid)
            reads.append(server_reads(server._proc.pid))
        self.assertEqual(len(servers), 1, "a server per epoch")
        self.assertGreater(reads[0], 1.8 * size, "the first epoch's index pass is not counted")
        for e in (1, 2):
            self.assertLess(reads[e] - reads[e - 1], 1.5 * size, "epoch %d read the file %.2f times" % (
                e, (reads[e] - reads[e - 1]) / size))


def _server_reads(mb):
    """A transform: the minibatch's worker's server's reads so far, and its pid."""
    pid = torch.utils.data.get_worker_info().dataset._conn.server._proc.pid
    return server_reads(pid), pid


@unittest.skipIf(torch is None, "python3-torch absent")
@unittest.skipUnless(os.path.exists("/proc/self/io"), "no /proc/PID/io here")
class IndexCachedTest(unittest.TestCase):
    def test_workers_not_persistent(self):
        # A DataLoader worker that is not persistent starts a private
        # server every epoch; the servers keep the index in the cache
        # directory, so only the first epoch reads the file twice.
        d = tempfile.mkdtemp()
        path = os.path.join(d, "c.ctf")
        write_corpus(path, 60000)
        size = os.path.getsize(path)
        ds = SequenceDataset([path], STREAMS, rank=0, workers=1, mb="4096", seed=1, epochs=3,
                             transform=_server_reads, cache_dir=os.path.join(d, "cache"))
        loader = DataLoader(ds, batch_size=None, num_workers=1)
        reads, servers = [], set()
        for _ in range(3):
            last = list(loader)[-1]
            reads.append(last[0])
            servers.add(last[1])
        self.assertEqual(len(servers), 3, "the workers were persistent")
        self.assertGreater(reads[0], 1.8 * size, "the first epoch's index pass is not counted")
        for e in (1, 2):
            self.assertLess(reads[e], 1.5 * size, "epoch %d read the file %.2f times" % (e, reads[e] / size))


@unittest.skipIf(torch is None, "python3-torch absent")
class LenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        d = tempfile.mkdtemp()
        cls.one = os.path.join(d, "one.ctf")
        write_one_sample_corpus(cls.one, 53)
        cls.corpus = os.path.join(d, "c.ctf")
        write_corpus(cls.corpus, 20)

    def test_minibatches_of_one_epoch(self):
        for epoch_size, mb, workers, num_workers in ((25, 6, 1, 0), ("10", 5, 2, 0), (7, "20", 1, 2), (100, 9, 3, 1)):
            with self.subTest(epoch_size=epoch_size, mb=mb, workers=workers, num_workers=num_workers):
                ds = SequenceDataset([self.one], ["x:1"], rank=workers - 1, workers=workers, mb=mb,
                                     epoch_size=epoch_size, seed=1)
                loader = DataLoader(ds, batch_size=None, num_workers=num_workers)
                self.assertEqual(len(loader), len(ds))
                self.assertEqual([sum(1 for _ in loader) for _ in range(3)], [len(ds)] * 3)

    def test_no_length_says_why(self):
        for kw, why in ((dict(), "epoch_size='full' (the default) is one sweep"),
                        (dict(epoch_size="inf"), "one endless epoch"),
                        (dict(epoch_size=30, mb="4*2:8"), "mb='4*2:8' is a schedule"),
                        (dict(epoch_size=30, label="y"), "label='y', defines_mb_size=None"),
                        (dict(epoch_size=30, cut_at_sweep=True), "cut_at_sweep=True")):
            with self.subTest(**kw):
                ds = SequenceDataset([self.corpus], STREAMS, rank=0, workers=1, **kw)
                with self.assertRaisesRegex(TypeError, "^len\\(SequenceDataset\\): .*" + re.escape(why)):
                    len(ds)
                with self.assertRaises(TypeError):
                    len(DataLoader(ds, batch_size=None))
        # Without a length, list() and loops work as before.
        ds = SequenceDataset([self.corpus], STREAMS, rank=0, workers=1, mb="8")
        self.assertEqual(len(list(ds)), len(list(DataLoader(ds, batch_size=None))))


if __name__ == "__main__":
    unittest.main()
