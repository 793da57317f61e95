"""Shared by the tests: a built batchprep binary and `batchprep read` output."""

import json
import os
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
_bin = None


def binary():
    """BATCHPREP_BIN, else the repository's batchprep built once into a temp dir."""
    global _bin
    if _bin is None:
        _bin = os.environ.get("BATCHPREP_BIN")
        if not _bin:
            d = tempfile.mkdtemp(prefix="batchprep-pytest-")
            _bin = os.path.join(d, "batchprep")
            subprocess.run(["go", "build", "-o", _bin, "./cmd/batchprep"], cwd=REPO, check=True)
            os.environ["BATCHPREP_BIN"] = _bin
    return _bin


def read_jsonl(args):
    out = subprocess.run([binary(), "read", "--quiet", "--format", "jsonl"] + args, check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    return [json.loads(l) for l in out.splitlines() if l]


def write_corpus(path, n):
    """Sequence i has 1 + i%4 lines; line j: x = [i, j], y = {(i+j)%7: i+0.5}."""
    with open(path, "w") as f:
        for i in range(n):
            for j in range(1 + i % 4):
                f.write("%d |x %d %d |y %d:%g\n" % (100 + i, i, j, (i + j) % 7, i + 0.5))


def write_one_sample_corpus(path, n):
    with open(path, "w") as f:
        for i in range(n):
            f.write("%d |x %d\n" % (i, i))
