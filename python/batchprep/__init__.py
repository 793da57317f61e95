"""batchprep: minibatches from a `batchprep serve` process, as numpy arrays.

The contract is SPEC C1 (docs/serve.md, "Python API"):

    import batchprep
    for mb in batchprep.read(["corpus.ctf"], streams=["S0:943:sparse"], mb="256"):
        mb.step, mb.sequences, mb["S0"], mb.lengths["S0"], mb.state

    src = batchprep.MinibatchSource(["corpus.ctf"], streams=[...])
    mb = src.next_minibatch(1024); st = src.state; src.restore(st)

Without an address a local `batchprep serve` (BATCHPREP_BIN, else `batchprep`
on PATH) is started on a free loopback port and stopped when the iterator or
source is closed, or when the process exits. Needs only Debian's
python3-grpcio, python3-protobuf and python3-numpy; batchprep.torch needs
python3-torch.
"""

from .client import Minibatch, MinibatchSource, read
from .graph import GraphRecord, read_graph
from .server import LocalServer

__all__ = ["read", "Minibatch", "MinibatchSource", "read_graph", "GraphRecord", "LocalServer"]
