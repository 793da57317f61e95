"""The PyTorch examples at CI size: 2 ranks under torchrun with gloo, a run
killed after a checkpoint and resumed gets exactly the batches of an
uninterrupted run; the loss falls; the slot accuracy is printed."""

import ast
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

from .helpers import REPO, SHARED, binary

ATIS = os.path.join(SHARED, "ctf", "atis")
EXAMPLE = os.path.join(REPO, "examples", "pytorch", "atis_slot_tagger.py")
TORCHRUN = shutil.which("torchrun")


def torchrun(args, check=True):
    # Debian's torch 1.13 torchrun fails on Python 3.11 with the default
    # --redirects 0 (its Std.from_str returns None); --redirects 1 --tee 1
    # keeps stdout on the console.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [TORCHRUN, "--redirects", "1", "--tee", "1", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(port), EXAMPLE] + args
    env = dict(os.environ, BATCHPREP_BIN=binary())
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=900)
    if check and p.returncode != 0:
        raise AssertionError("torchrun %s: exit %d\n%s" % (args, p.returncode, p.stdout.decode()[-3000:]))
    return p.returncode, p.stdout.decode()


def log(prefix, rank):
    with open("%s.rank%d" % (prefix, rank)) as f:
        return [json.loads(l) for l in f]


@unittest.skipUnless(TORCHRUN and os.path.exists(os.path.join(ATIS, "atis.train.ctf")), "torchrun or ../shared/data/ctf/atis absent")
class AtisExampleTest(unittest.TestCase):
    def test_kill_resume_identical_batches(self):
        d = tempfile.mkdtemp()
        steps = int(os.environ.get("BATCHPREP_EXAMPLE_STEPS", "40"))
        common = ["--data", ATIS, "--steps", str(steps), "--ckpt-every", "10", "--mb", "256"]
        _, out = torchrun(common + ["--ckpt", d + "/a", "--log", d + "/a.log"])
        self.assertIn("slot accuracy on atis.test:", out)
        line = [l for l in out.splitlines() if "loss: first 20 steps" in l][0].split()
        first, last = float(line[-5].rstrip(",")), float(line[-1])
        self.assertLess(last, first, out)
        code, out = torchrun(common + ["--ckpt", d + "/b", "--log", d + "/b.log", "--die-after", str(steps // 2 + 5), "--no-eval"], check=False)
        self.assertNotEqual(code, 0, "the killed run should fail")
        _, out = torchrun(common + ["--ckpt", d + "/b", "--log", d + "/b.log", "--resume", "--no-eval"])
        self.assertIn("resumed at step %d" % (steps // 2), out)
        for rank in (0, 1):
            a, b = log(d + "/a.log", rank), log(d + "/b.log", rank)
            resumed = [r for r in b[steps // 2 + 5:]]  # the entries written after the resume
            self.assertEqual([r["step"] for r in resumed], list(range(steps // 2, steps)))
            self.assertEqual([r["sequences"] for r in resumed], [r["sequences"] for r in a[steps // 2:]])
            self.assertEqual([r["mb_step"] for r in resumed], [r["mb_step"] for r in a[steps // 2:]])
        self.assertEqual(glob.glob(d + "/b/*.tmp"), [])



@unittest.skipUnless(TORCHRUN and os.path.exists(os.path.join(ATIS, "atis.train.ctf")), "torchrun or ../shared/data/ctf/atis absent")
class DocstringCommandTest(unittest.TestCase):
    def test_as_written(self):
        # The docstring's commands, run from the repository root, with the
        # binary built by the tests, fewer steps and a temporary checkpoint.
        with open(EXAMPLE) as f:
            doc = ast.get_docstring(ast.parse(f.read()))
        block = [l[4:] for l in doc.splitlines() if l.startswith("    ")]
        cmds = " ".join(l.rstrip("\\").strip() if l.endswith("\\") else l.strip() + "\n" for l in block)
        cmds = [c.strip() for c in cmds.split("\n") if c.strip()]
        self.assertEqual(cmds[0], "go build -o /tmp/batchprep ./cmd/batchprep")
        d = tempfile.mkdtemp()
        run = cmds[1].replace("/tmp/batchprep", binary()).replace("--steps 400", "--steps 3").replace(
            "/tmp/atis-ckpt", d + "/ckpt")
        self.assertIn("--steps 3", run)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            run = run.replace("--nproc_per_node", "--master_port %d --nproc_per_node" % s.getsockname()[1])
        p = subprocess.run(["bash", "-c", run], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
        out = p.stdout.decode()
        self.assertEqual(p.returncode, 0, out[-3000:])
        self.assertIn("slot accuracy on atis.test:", out)
        self.assertNotIn("BatchprepWarning", out)


GRAPH_EXAMPLE = os.path.join(REPO, "examples", "pytorch", "graph_embeddings.py")
NATIONS = os.path.join(SHARED, "kg", "nations")


@unittest.skipUnless(os.path.exists(os.path.join(NATIONS, "train.txt")), "../shared/data/kg/nations absent")
class GraphExampleTest(unittest.TestCase):
    def test_loss_falls(self):
        p = subprocess.run([sys.executable, GRAPH_EXAMPLE, "--kg", NATIONS, "--epochs", "4"], check=True,
                           stdout=subprocess.PIPE, env=dict(os.environ, BATCHPREP_BIN=binary()), timeout=600)
        losses = [float(l.split()[-1]) for l in p.stdout.decode().splitlines() if l.startswith("epoch ")]
        self.assertEqual(len(losses), 4, p.stdout.decode())
        self.assertLess(losses[-1], losses[0])


if __name__ == "__main__":
    unittest.main()
