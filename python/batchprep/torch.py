"""PyTorch glue: tensors over a minibatch's arrays, and an IterableDataset
with state_dict()/load_state_dict() in the manner of torchdata's
StatefulDataLoader, so that a training checkpoint holds the data position."""

import os
import warnings

import numpy as np
import torch
from torch.utils.data import IterableDataset

from .client import read


def _tensor(a):
    with warnings.catch_warnings():
        # The arrays view the message's read-only bytes; torch warns that it
        # cannot protect them. Do not write into these tensors.
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a)


def minibatch_tensors(mb):
    """{name: tensor} for dense streams, {name: (indptr, indices, values)}
    for sparse ones, sharing memory with mb's arrays."""
    out = {}
    for name in mb.keys():
        v = mb[name]
        out[name] = tuple(_tensor(x) for x in v) if isinstance(v, tuple) else _tensor(v)
    return out


def sparse_ids(mb, name):
    """For a one-hot sparse stream: the index of each sample (int64)."""
    indptr, indices, _ = mb[name]
    if len(indices) != len(indptr) - 1:
        raise ValueError("stream %s is not one entry per sample" % name)
    return indices.astype(np.int64)


def padded(mb, values, name, pad=0):
    """Per-sample values (first axis = samples of stream name, in sequence
    order) as a (sequences, longest, ...) array padded with pad, and the
    lengths."""
    lengths = mb.lengths[name]
    n, t = len(lengths), int(lengths.max()) if len(lengths) else 0
    out = np.full((n, t) + values.shape[1:], pad, dtype=values.dtype)
    ends = np.cumsum(lengths)
    for i, (e, l) in enumerate(zip(ends, lengths)):
        out[i, :l] = values[e - l:e]
    return out, lengths.astype(np.int64)


class SequenceDataset(IterableDataset):
    """Minibatches of read() as a torch IterableDataset (use it with
    DataLoader(ds, batch_size=None): each item is already a minibatch).

    rank and workers default to torchrun's RANK and WORLD_SIZE. Every rank
    holds the same position (SPEC A4), so rank 0's state_dict() serves all.
    transform, when given, maps each Minibatch to what the loop receives."""

    def __init__(self, files, streams, rank=None, workers=None, transform=None, **kw):
        super().__init__()
        self.files, self.streams, self.kw, self.transform = files, streams, kw, transform
        self.rank = int(os.environ.get("RANK", 0)) if rank is None else rank
        self.workers = int(os.environ.get("WORLD_SIZE", 1)) if workers is None else workers
        self._state = kw.pop("state", None)
        self._delivered = 0

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        if info is not None and info.num_workers > 1:
            raise RuntimeError("SequenceDataset: use DataLoader num_workers 0 or 1; the server parses in parallel")
        with read(self.files, self.streams, workers=self.workers, rank=self.rank, state=self._state, **self.kw) as it:
            for mb in it:
                self._state = mb.state
                self._delivered += 1
                yield self.transform(mb) if self.transform else mb

    def state_dict(self):
        """The data position after the last minibatch delivered."""
        return {"version": 1, "state": self._state}

    def load_state_dict(self, sd):
        """Resume right after the position in sd at the next iteration."""
        if not isinstance(sd, dict) or sd.get("version") != 1 or "state" not in sd:
            raise ValueError("SequenceDataset.load_state_dict: not a state_dict of this class: %r" % (sd,))
        self._state = sd["state"]
