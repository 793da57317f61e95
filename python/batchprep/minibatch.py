"""Minibatch: one minibatch of a sequence call, its metadata and its
streams as numpy arrays."""

from __future__ import annotations

import json
from typing import Any, Dict, KeysView, List, Tuple, Union

import numpy as np

from . import batchprep_pb2 as pb

_I4, _I8, _F4 = np.dtype("<i4"), np.dtype("<i8"), np.dtype("<f4")

Sparse = Tuple[np.ndarray, np.ndarray, np.ndarray]
StreamArrays = Union[np.ndarray, Sparse]


# Read-only 0, 1, 2, ... (int32) and ones (float32), grown by replacement,
# never written: the rebuilt indptr and values of one-hot streams are views
# of them. numpy refuses writes into them and refuses to make a view of a
# read-only array writable, so minibatches cannot change each other's
# arrays; to_torch() copies.
_unit = {"rows": np.zeros(0, dtype=_I4), "ones": np.zeros(0, dtype=_F4)}


def _units(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """Read-only views of 0..n (the indptr of n one-entry rows) and of n ones."""
    rows, ones = _unit["rows"], _unit["ones"]
    if len(ones) < n + 1:
        m = max(n + 1, 2 * len(ones), 4096)
        rows, ones = np.arange(m, dtype=_I4), np.ones(m, dtype=_F4)
        rows.flags.writeable = ones.flags.writeable = False
        _unit["rows"], _unit["ones"] = rows, ones
    return rows[:n + 1], ones[:n]


class Minibatch:
    """One minibatch: the metadata of a `batchprep read --format jsonl` line
    (step, epoch, sweep, start, end, end_of_sweep, end_of_epoch, sequences,
    ids, samples), the state after it, and each stream's data as numpy
    arrays.

    The arrays are read-only views of the received bytes (writing into one
    raises ValueError); to_torch() gives tensors that own a copy, so that
    in-place operations are safe. Arrays are made on first access, so a
    trainer pays only for the fields it reads. A Minibatch pickles (DataLoader
    workers send minibatches to the training process)."""

    __slots__ = ("step", "epoch", "sweep", "start", "end", "end_of_sweep", "end_of_epoch",
                 "_msg", "_tail", "_sequences", "_ids", "_lengths", "_streams")

    step: int
    epoch: int
    sweep: int
    start: int
    end: int
    end_of_sweep: bool
    end_of_epoch: bool

    def __init__(self, msg: pb.SequenceMinibatch, state_tail: bytes = b"") -> None:
        self.step, self.epoch, self.sweep = msg.step, msg.epoch, msg.sweep
        self.start, self.end = msg.start, msg.end
        self.end_of_sweep, self.end_of_epoch = msg.end_of_sweep, msg.end_of_epoch
        self._msg, self._tail = msg, state_tail
        self._sequences = self._ids = self._lengths = self._streams = None

    def __reduce__(self) -> Tuple[Any, Tuple[bytes, bytes]]:
        return (_from_wire, (self._msg.SerializeToString(), self._tail))

    def _unpack(self) -> None:
        """Every array of a packed message: views of its one arrays buffer,
        cut as SequenceMinibatch.arrays documents (one frombuffer, then
        slices, which cost less)."""
        m = self._msg
        buf, n = m.arrays, m.sequence_count
        if len(buf) % 4:
            raise ValueError("batchprep: a packed minibatch holds %d bytes of arrays, not whole int32s" % len(buf))
        w = np.frombuffer(buf, dtype=_I4)  # the buffer in 4-byte words
        self._sequences = w[:2 * n].view(_I8)
        off = 2 * n
        lengths: Dict[str, np.ndarray] = {}
        data: Dict[str, StreamArrays] = {}
        for s in m.streams:
            name = s.name
            lengths[name] = w[off:off + n]
            off += n
            if s.sparse:
                entries = s.entries
                unit_rows, unit_values = s.unit_rows, s.unit_values
                if unit_rows or unit_values:
                    rows, ones = _units(entries)
                if unit_rows:
                    indptr = rows
                else:
                    k = s.samples + 1
                    indptr = w[off:off + k]
                    off += k
                indices = w[off:off + entries]
                off += entries
                if unit_values:
                    values = ones
                else:
                    values = w[off:off + entries].view(_F4)
                    off += entries
                data[name] = (indptr, indices, values)
            else:
                k = s.samples * s.dim
                data[name] = w[off:off + k].view(_F4).reshape(-1, s.dim)
                off += k
        if off != len(w):
            raise ValueError("batchprep: a packed minibatch holds %d bytes of arrays, its counts say %d" % (
                len(buf), 4 * off))
        self._lengths, self._streams = lengths, data

    @property
    def sequences(self) -> np.ndarray:
        """numpy int64: the sequences' ordinals in file order."""
        if self._sequences is None:
            if self._msg.HasField("sequence_count"):
                self._unpack()
            else:
                self._sequences = np.frombuffer(self._msg.sequences, dtype=_I8)
        return self._sequences

    @property
    def ids(self) -> List[str]:
        """The sequences' ids as written in the file."""
        if self._ids is None:
            m = self._msg
            if m.HasField("sequence_count"):
                self._ids = m.ids_joined.decode().split("\n") if m.sequence_count else []
            else:
                self._ids = list(m.ids)
        return self._ids

    @property
    def skipped(self) -> List[int]:
        """Ordinals of sequences whose data could not be parsed (within
        max_errors); a BatchprepWarning says why."""
        return list(self._msg.skipped)

    @property
    def lengths(self) -> Dict[str, np.ndarray]:
        """{stream: numpy int32 samples per sequence}."""
        if self._lengths is None:
            if self._msg.HasField("sequence_count"):
                self._unpack()
            else:
                self._lengths = {s.name: np.frombuffer(s.lengths, dtype=_I4) for s in self._msg.streams}
        return self._lengths

    def _data(self) -> Dict[str, StreamArrays]:
        if self._streams is None and self._msg.HasField("sequence_count"):
            self._unpack()
        if self._streams is None:
            d: Dict[str, StreamArrays] = {}
            for s in self._msg.streams:
                if s.sparse:
                    indices = np.frombuffer(s.indices, dtype=_I4)
                    if s.unit_rows or s.unit_values:
                        rows, ones = _units(len(indices))
                    indptr = rows if s.unit_rows else np.frombuffer(s.indptr, dtype=_I4)
                    values = ones if s.unit_values else np.frombuffer(s.values, dtype=_F4)
                    d[s.name] = (indptr, indices, values)
                else:
                    d[s.name] = np.frombuffer(s.dense, dtype=_F4).reshape(-1, s.dim)
            self._streams = d
        return self._streams

    def __getitem__(self, name: str) -> StreamArrays:
        """Dense stream: float32 (samples, dim); sparse stream: the CSR
        arrays (indptr int32, indices int32, values float32)."""
        return self._data()[name]

    def keys(self) -> KeysView[str]:
        """The stream names."""
        return self._data().keys()

    @property
    def state(self) -> Dict[str, Any]:
        """The state to resume right after this minibatch (a dict; JSON as
        `batchprep read --state-out` writes it)."""
        return json.loads(self.state_bytes)

    @property
    def state_bytes(self) -> bytes:
        """state as the JSON bytes `batchprep read --state-out` writes."""
        return self._msg.state + self._tail

    @property
    def samples(self) -> Dict[str, int]:
        """Samples per stream, as read's "samples"."""
        return {k: int(v.sum()) for k, v in self.lengths.items()}

    def to_torch(self) -> Dict[str, Any]:
        """The streams as torch tensors that own their memory (a copy of the
        arrays, so in-place operations touch nothing else): dense float32
        (samples, dim); sparse a tuple (indptr, indices, values)."""
        import torch  # the PyTorch package, imported only when asked for

        def tensor(a: np.ndarray) -> Any:
            return torch.from_numpy(np.array(a, copy=True))

        return {name: tuple(tensor(x) for x in v) if isinstance(v, tuple) else tensor(v)
                for name, v in self._data().items()}

    def __repr__(self) -> str:
        return "Minibatch(step=%d, epoch=%d, sweep=%d, start=%d, end=%d, sequences=%d)" % (
            self.step, self.epoch, self.sweep, self.start, self.end, len(self.sequences))


def _from_wire(data: bytes, state_tail: bytes = b"") -> Minibatch:
    """A Minibatch from its serialized message (unpickling)."""
    return Minibatch(pb.SequenceMinibatch.FromString(data), state_tail)
