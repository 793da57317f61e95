"""The private server the client starts: a Unix socket in a 0700 directory."""

import os
import stat
import subprocess
import sys
import tempfile
import unittest

import batchprep
from batchprep.server import LocalServer

from .helpers import REPO, binary, write_corpus

STREAMS = ["x:2", "y:7:sparse"]


class LocalServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.corpus = os.path.join(cls.dir, "c.ctf")
        write_corpus(cls.corpus, 20)

    def test_unix_socket_in_private_directory(self):
        with LocalServer(binary()) as s:
            self.assertTrue(s.address.startswith("unix:/"), s.address)
            sock = s.address[len("unix:"):]
            d = os.path.dirname(sock)
            self.assertTrue(stat.S_ISSOCK(os.stat(sock).st_mode))
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700)
            n = sum(1 for _ in batchprep.read([self.corpus], streams=STREAMS, mb="8", address=s.address))
            self.assertGreater(n, 0)
        self.assertFalse(os.path.exists(d), "the socket directory is left after close()")

    def test_user_paths_as_given(self):
        # An absolute path outside the current directory, and a relative
        # one taken in the current directory, as the user's own process
        # would open them.
        n = sum(1 for _ in batchprep.read([self.corpus], streams=STREAMS, mb="8"))
        self.assertGreater(n, 0)
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            m = sum(1 for _ in batchprep.read(["c.ctf"], streams=STREAMS, mb="8"))
        finally:
            os.chdir(cwd)
        self.assertEqual(m, n)

    def test_quiet_stop(self):
        # A program that reads and exits: nothing from the server on stderr.
        code = ("import batchprep\n"
                "it = batchprep.read([%r], streams=%r, epoch_size='inf')\n"
                "next(it)\n"
                "it.close()\n"
                "it = batchprep.read([%r], streams=%r, epoch_size='inf')\n"
                "next(it)\n") % (self.corpus, STREAMS, self.corpus, STREAMS)
        env = dict(os.environ, BATCHPREP_BIN=binary(), PYTHONPATH=os.path.join(REPO, "python"))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.decode(), "")


if __name__ == "__main__":
    unittest.main()
