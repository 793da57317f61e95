"""Corpora in object storage (s3://BUCKET/KEY) through the client: the
private server's command line, cache_dir=, and a read from a real MinIO
that equals `batchprep read s3://... --format jsonl`."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

import batchprep
from batchprep.server import LocalServer

from .helpers import binary, read_jsonl, write_corpus
from .s3server import MinIO, minio_binary
from .test_read import as_line, flags

try:
    import torch  # noqa: F401
    from batchprep.torch import SequenceDataset
except ImportError:
    SequenceDataset = None

STREAMS = ["x:2", "y:7:sparse"]


def command_line(server):
    """The command line the private server runs with, as the kernel has it."""
    with open("/proc/%d/cmdline" % server._proc.pid, "rb") as f:
        return [a.decode() for a in f.read().split(b"\0")[:-1]]


class PrivateServerTest(unittest.TestCase):
    @unittest.skipUnless(os.path.isdir("/proc/self"), "no /proc to read the server's command line from")
    def test_allow_bucket_and_cache_dir(self):
        cache = tempfile.mkdtemp()
        with LocalServer(binary(), cache_dir=cache) as s:
            args = command_line(s)
            self.assertIn(["--allow-bucket", "*"], [args[i:i + 2] for i in range(len(args))], args)
            self.assertIn(["--cache-dir", cache], [args[i:i + 2] for i in range(len(args))], args)
        with LocalServer(binary()) as s:
            args = command_line(s)
            self.assertIn("--allow-bucket", args)
            self.assertNotIn("--cache-dir", args)  # the server's default

    def test_cache_dir_with_address_is_refused(self):
        calls = [lambda: batchprep.read("s3://b/c.ctf", streams=STREAMS, address="127.0.0.1:1", cache_dir="/tmp/c"),
                 lambda: batchprep.MinibatchSource("s3://b/c.ctf", STREAMS, address="127.0.0.1:1", cache_dir="/tmp/c")]
        if SequenceDataset is not None:
            calls.append(lambda: SequenceDataset("s3://b/c.ctf", STREAMS, address="127.0.0.1:1", cache_dir="/tmp/c"))
        for call in calls:
            with self.assertRaisesRegex(ValueError, "cache_dir=.*its own cache"):
                call()


class MinIOReadTest(unittest.TestCase):
    """Needs the MinIO binary Go's tests build (go test ./internal/miniotest),
    or BATCHPREP_MINIO: a skip without it, a failure under CI=true."""

    @classmethod
    def setUpClass(cls):
        cls.minio = None
        bin = minio_binary()
        if bin is None:
            msg = ("no MinIO binary (~/.cache/batchprep/minio/*/minio, or BATCHPREP_MINIO; "
                   "`go test ./internal/miniotest` builds it)")
            if os.environ.get("CI") == "true":
                raise AssertionError(msg + ": required under CI=true")
            raise unittest.SkipTest(msg + "; CI=true makes this a failure")
        binary()
        cls.dir = tempfile.mkdtemp()
        cls.ctf = os.path.join(cls.dir, "c.ctf")
        write_corpus(cls.ctf, 47)
        cls.parquet = os.path.join(cls.dir, "c.parquet")
        subprocess.run([binary(), "convert", cls.ctf, cls.parquet, "--row-group-rows", "10"] + flags(STREAMS),
                       check=True, stderr=subprocess.DEVNULL)
        cls.minio = MinIO(bin)
        cls.minio.make_bucket("corpora")
        cls.minio.put_file("corpora", "c.ctf", cls.ctf)
        cls.minio.put_file("corpora", "sub/c.parquet", cls.parquet)

    @classmethod
    def tearDownClass(cls):
        if cls.minio is not None:
            cls.minio.stop()

    def test_read_equals_cli(self):
        kw = dict(mb="7", seed=3, epochs=2, chunk_sequences=5, window_chunks=2)
        args = ["--mb", "7", "--seed", "3", "--epochs", "2", "--chunk-sequences", "5", "--window-chunks", "2"]
        with mock.patch.dict(os.environ, self.minio.env()):
            for url, local in (("s3://corpora/c.ctf", self.ctf), ("s3://corpora/sub/c.parquet", self.parquet)):
                with self.subTest(url=url):
                    cli_cache, py_cache = tempfile.mkdtemp(), tempfile.mkdtemp()
                    want = read_jsonl([url, "--cache-dir", cli_cache] + flags(STREAMS) + args)
                    self.assertTrue(want)
                    self.assertEqual(want, read_jsonl([local] + flags(STREAMS) + args))
                    with batchprep.read(url, streams=STREAMS, cache_dir=py_cache, **kw) as it:
                        got = [as_line(mb) for mb in it]
                    self.assertEqual(got, want)
                    self.assertTrue(os.listdir(py_cache), "the private server did not cache in cache_dir")


if __name__ == "__main__":
    unittest.main()
