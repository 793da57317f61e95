"""The private server's batchprep-* directories in TMPDIR: none is left
after a missing binary or running out of file descriptors, and one left by a
process killed with SIGKILL is removed by the next process that starts a
server, while a live process's directory is kept."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

from .helpers import REPO, binary, write_corpus

_READ_ONE = r"""
import sys, batchprep
it = batchprep.read([sys.argv[1]], streams=["x:2", "y:7:sparse"], mb="4", epoch_size="inf")
next(it)
print("ready", flush=True)
if len(sys.argv) > 2:
    sys.stdin.read()  # hold the server until told
it.close()
"""

# Under `ulimit -n 64`: use up the descriptors but k, for k = 0, 1, ...,
# and start a read each time; report how it went and what TMPDIR holds.
_EMFILE = r"""
import errno, json, os, resource, sys, tempfile
import batchprep
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
out = []
for k in range(24):
    held = []
    try:
        while True:
            held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        assert e.errno == errno.EMFILE, e
    for fd in held[len(held) - k:] if k else []:
        os.close(fd)
    del held[len(held) - k:]
    try:
        it = batchprep.read([sys.argv[1]], streams=["x:2", "y:7:sparse"], mb="4", epoch_size="inf")
        next(it)
        it.close()
        how = "ok"
    except Exception as e:
        how = "%s: %s" % (type(e).__name__, e)
    for fd in held:
        os.close(fd)
    out.append([k, how, sorted(n for n in os.listdir(tempfile.gettempdir()) if n.startswith("batchprep-"))])
print(json.dumps(out))
"""


class TmpDirsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()
        cls.corpus = os.path.join(tempfile.mkdtemp(), "c.ctf")
        write_corpus(cls.corpus, 20)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tmpdir-")

    def env(self, **kw):
        env = dict(os.environ, BATCHPREP_BIN=binary(), PYTHONPATH=os.path.join(REPO, "python"), TMPDIR=self.tmp)
        env.update(kw)
        return env

    def left(self):
        return sorted(n for n in os.listdir(self.tmp) if n.startswith("batchprep-"))

    def test_missing_binary(self):
        for name, env in (("none on PATH", dict(self.env(), PATH="/usr/bin:/bin")),
                          ("BATCHPREP_BIN missing", self.env(BATCHPREP_BIN=os.path.join(self.tmp, "nothing"))),
                          ("a binary that is not batchprep", self.env(BATCHPREP_BIN="/bin/false"))):
            with self.subTest(name):
                if name == "none on PATH":
                    del env["BATCHPREP_BIN"]
                r = subprocess.run([sys.executable, "-c", _READ_ONE, self.corpus], env=env, capture_output=True,
                                   timeout=60)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(b"batchprep", r.stderr)
                self.assertEqual(self.left(), [])

    def test_killed_process_directory_removed_by_next_start(self):
        kept = ["batchprep-no-owner", "batchprep-other-namespace", "batchprep-test-owner"]
        live = subprocess.Popen([sys.executable, "-c", _READ_ONE, self.corpus, "hold"], env=self.env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            self.assertEqual(live.stdout.readline(), b"ready\n")
            live_dirs = self.left()
            self.assertEqual(len(live_dirs), 1)
            killed = subprocess.Popen([sys.executable, "-c", _READ_ONE, self.corpus, "hold"], env=self.env(),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self.assertEqual(killed.stdout.readline(), b"ready\n")
            killed.send_signal(signal.SIGKILL)
            killed.wait()
            killed.stdin.close()
            killed.stdout.close()
            stale = sorted(set(self.left()) - set(live_dirs))
            self.assertEqual(len(stale), 1, "the killed process's directory, left behind")
            # Directories that are not a dead owner's are never touched: one
            # without an owner file, one whose owner file names this process.
            os.mkdir(os.path.join(self.tmp, "batchprep-no-owner"))
            mine = os.path.join(self.tmp, "batchprep-test-owner")
            os.mkdir(mine)
            with open("/proc/self/stat") as f:
                started = f.read().rsplit(")", 1)[1].split()[19]
            with open(os.path.join(mine, "owner.pid"), "w") as f:
                f.write("%d %s %s\n" % (os.getpid(), started, os.readlink("/proc/self/ns/pid")))
            # One whose owner lives in another pid namespace (another
            # container sharing TMPDIR): its id means nothing here.
            other = os.path.join(self.tmp, "batchprep-other-namespace")
            os.mkdir(other)
            with open(os.path.join(other, "owner.pid"), "w") as f:
                f.write("%d 1 pid:[1]\n" % killed.pid)
            r = subprocess.run([sys.executable, "-c", _READ_ONE, self.corpus], env=self.env(), capture_output=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.left(), sorted(live_dirs + kept))
        finally:
            live.stdin.close()
            live.wait(30)
            live.stdout.close()
        self.assertEqual(self.left(), kept)

    def test_out_of_file_descriptors(self):
        r = subprocess.run([sys.executable, "-c", _EMFILE, self.corpus], env=self.env(), capture_output=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode()[-3000:])
        out = json.loads(r.stdout.decode().splitlines()[-1])
        self.assertEqual([(k, left) for k, _, left in out if left], [], out)
        hows = [how for _, how, _ in out]
        self.assertTrue(any("Too many open files" in h for h in hows), hows)
        self.assertEqual(hows[-1], "ok", hows)


if __name__ == "__main__":
    unittest.main()
