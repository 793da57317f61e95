"""A loop that runs for days: streams from a private server stopped early
(break, close(), every epoch of a SequenceDataset) give back their file
descriptors, so a process under a small `ulimit -n` runs on."""

import json
import os
import resource
import subprocess
import sys
import tempfile
import unittest

from .helpers import REPO, binary, write_corpus

# Run in a child process under `ulimit -n 64`: it prints the count of open
# descriptors after warming up and after each kind of early stop.
_CHILD = r"""
import json, os, sys
import batchprep
from torch.utils.data import DataLoader
from batchprep.torch import SequenceDataset

corpus, epochs = sys.argv[1], int(sys.argv[2])
streams = ["x:2", "y:7:sparse"]

def open_fds():
    return len(os.listdir("/proc/self/fd")) - 1  # the listing's own descriptor

ds = SequenceDataset([corpus], streams, rank=0, workers=1, mb="8")
for mb in DataLoader(ds, batch_size=None, num_workers=0):  # warm up: grpc's own descriptors
    pass
counts = {"before": open_fds()}
for e in range(epochs):
    for mb in DataLoader(ds, batch_size=None, num_workers=0):
        pass
counts["epochs"] = open_fds()
for i in range(40):
    for mb in batchprep.read([corpus], streams=streams, mb="4", epoch_size="inf"):
        break
counts["break"] = open_fds()
for i in range(40):
    it = batchprep.read([corpus], streams=streams, mb="4", epoch_size="inf")
    next(it)
    it.close()
counts["close"] = open_fds()
print(json.dumps(counts))
"""


def _limit_fds():
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


class FdLeakTest(unittest.TestCase):
    def test_500_epochs_under_ulimit_64(self):
        d = tempfile.mkdtemp()
        corpus = os.path.join(d, "c.ctf")
        write_corpus(corpus, 30)
        env = dict(os.environ, BATCHPREP_BIN=binary(), PYTHONPATH=os.path.join(REPO, "python"), TMPDIR=d)
        r = subprocess.run([sys.executable, "-c", _CHILD, corpus, "500"], env=env, capture_output=True,
                           preexec_fn=_limit_fds, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr.decode()[-3000:])
        counts = json.loads(r.stdout.decode().splitlines()[-1])
        before = counts.pop("before")
        self.assertEqual(counts, {k: before for k in counts}, "open descriptors grew (before: %d)" % before)
        self.assertEqual([n for n in os.listdir(d) if n.startswith("batchprep-")], [])


if __name__ == "__main__":
    unittest.main()
