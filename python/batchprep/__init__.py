"""batchprep: minibatches from a `batchprep serve` process, as numpy arrays.

The contract is SPEC C1 (docs/serve.md, "Python API"; python/README.md):

    import batchprep
    for mb in batchprep.read("corpus.ctf", streams=["S0:943:sparse"], mb="256"):
        mb.step, mb.sequences, mb["S0"], mb.lengths["S0"], mb.state

    for mb in batchprep.read({"a.ctf": 0.7, "b.parquet": 0.3}, streams=[...]):
        mb.corpus  # a weighted mixture (docs/mixtures.md): each sequence's corpus

    src = batchprep.MinibatchSource("corpus.ctf", streams=[...])
    mb = src.next_minibatch(1024); st = src.state; src.restore(st)

    from batchprep.torch import SequenceDataset   # needs PyTorch

Without an address a private `batchprep serve` (BATCHPREP_BIN, else
`batchprep` on PATH) is started and stopped when the iterator or source is
closed, or when the process exits. Needs grpcio, protobuf and numpy (Debian's
python3-grpcio, python3-protobuf, python3-numpy); batchprep.torch needs
PyTorch. Refused requests raise BatchprepError; the reader's diagnostics
arrive as BatchprepWarning warnings.
"""

from .client import MinibatchSource, read
from .errors import BatchprepError, BatchprepWarning
from .graph import GraphRecord, read_graph
from .minibatch import Minibatch
from .server import LocalServer

__all__ = ["read", "Minibatch", "MinibatchSource", "read_graph", "GraphRecord", "LocalServer",
           "BatchprepError", "BatchprepWarning"]
