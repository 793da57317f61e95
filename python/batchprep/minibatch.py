"""Minibatch: one minibatch of a sequence call, its metadata and its
streams as numpy arrays."""

from __future__ import annotations

import json
from typing import Any, Dict, KeysView, List, Optional, Tuple, Union

import numpy as np

from . import batchprep_pb2 as pb

_I4, _I8, _F4, _U8 = np.dtype("<i4"), np.dtype("<i8"), np.dtype("<f4"), np.dtype("<u8")

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


class _Group:
    """What the minibatches of one columns message (SequenceGroup with
    SequenceRequest.columns) share: the int32 view of its arrays, its ids,
    its states and the call's streams and state tail."""

    __slots__ = ("words", "longs", "floats", "ids_bytes", "ids_list", "states", "tail", "streams", "corpora")

    def __init__(self, words: np.ndarray, ids_bytes: bytes, states: bytes, tail: bytes,
                 streams: List[Tuple[str, int, bool]], corpora: int = 0) -> None:
        # The same bytes as int32, int64 and float32: a minibatch's arrays
        # start at a multiple of 8 bytes, so each array is one slice.
        self.words, self.longs, self.floats = words, words.view(_I8), words.view(_F4)
        self.ids_bytes = ids_bytes
        self.ids_list: Optional[List[str]] = None
        self.states, self.tail, self.streams = states, tail, streams
        self.corpora = corpora  # a mixture's corpora (SequenceGroup.corpora); 0: one corpus

    def ids(self) -> List[str]:
        if self.ids_list is None:
            self.ids_list = self.ids_bytes.decode().split("\n")
        return self.ids_list


_FIXED = 9  # table entries of a minibatch before its streams' (SequenceGroup.table)


def from_columns(msg: pb.SequenceGroup, streams: List[Tuple[str, int, bool]], tail: bytes,
                 arrays: Any = None, corpora: int = 0) -> List["Minibatch"]:
    """The minibatches of a columns message, in order: the table read with
    one numpy call, the arrays of all minibatches viewed from one buffer
    (arrays when given, as taken from shared memory, else msg.arrays).
    corpora is the call's SequenceGroup.corpora: with a mixture each
    minibatch's arrays hold its corpus array after its sequences."""
    width = _FIXED + 3 * len(streams)
    table = np.frombuffer(msg.table, dtype=_U8)
    if len(table) % width or not len(table):
        if len(msg.minibatches):
            raise ValueError("batchprep: the server sent minibatches without columns: it predates this client; "
                             "use a batchprep serve of the same version")
        raise ValueError("batchprep: a columns message holds a table of %d bytes, not rows of %d numbers" % (
            8 * len(table), width))
    table = table.reshape(-1, width)
    if arrays is None:
        arrays = msg.arrays
    a_end = np.cumsum(table[:, 7]).tolist()
    s_end = np.cumsum(table[:, 8]).tolist()
    i_end = np.cumsum(table[:, 6]).tolist()
    if a_end[-1] != len(arrays) or s_end[-1] != len(msg.states) or any(x % 8 for x in a_end):
        raise ValueError("batchprep: a columns message's table accounts for %d bytes of arrays and %d of states, "
                         "it holds %d and %d" % (a_end[-1], s_end[-1], len(arrays), len(msg.states)))
    notes: Dict[int, pb.MinibatchNotes] = {}
    for note in msg.notes:
        notes[note.step] = note
    g = _Group(np.frombuffer(arrays, dtype=_I4), msg.ids if i_end[-1] else b"", msg.states, tail, streams, corpora)
    out = []
    a0 = s0 = i0 = 0
    for row, a1, s1, i1 in zip(table.tolist(), a_end, s_end, i_end):
        mb = Minibatch(g, row, a0 >> 2, a1 >> 2, i0, s0, s1)
        if notes:
            note = notes.get(row[0])
            if note is not None:
                mb._notes = (list(note.warnings), list(note.skipped), list(note.skipped_corpus))
        out.append(mb)
        a0, s0, i0 = a1, s1, i1
    return out


class Minibatch:
    """One minibatch: the metadata of a `batchprep read --format jsonl` line
    (step, epoch, sweep, start, end, end_of_sweep, end_of_epoch, sequences,
    ids, samples; for a mixture corpus and skipped_corpus), the state after
    it, and each stream's data as numpy arrays.

    The arrays are read-only views of the received bytes (writing into one
    raises ValueError); to_torch() gives tensors that own a copy, so that
    in-place operations are safe. Arrays are made on first access, so a
    trainer pays only for the fields it reads. A Minibatch pickles (DataLoader
    workers send minibatches to the training process)."""

    __slots__ = ("step", "epoch", "sweep", "start", "end", "end_of_sweep", "end_of_epoch",
                 "_g", "_row", "_w0", "_w1", "_i0", "_s0", "_s1", "_notes",
                 "_sequences", "_corpus", "_ids", "_lengths", "_streams")

    step: int
    epoch: int
    sweep: int
    start: int
    end: int
    end_of_sweep: bool
    end_of_epoch: bool

    def __init__(self, g: _Group, row: List[int], w0: int, w1: int, i0: int, s0: int, s1: int) -> None:
        self.step, self.epoch, self.sweep, self.start, self.end, flags = row[:6]
        self.end_of_sweep, self.end_of_epoch = flags & 1 != 0, flags & 2 != 0
        self._g, self._row, self._w0, self._w1, self._i0, self._s0, self._s1 = g, row, w0, w1, i0, s0, s1
        self._notes: Optional[Tuple[List[str], List[int], List[int]]] = None
        self._sequences = self._corpus = self._ids = self._lengths = self._streams = None

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        g = self._g
        return (_rebuild, (self._row, g.words[self._w0:self._w1].tobytes(), "\n".join(self.ids).encode(),
                           self.state_bytes, g.streams, self._notes, g.corpora))

    def _unpack(self) -> None:
        """Every array: views of the message's arrays buffer, cut as
        SequenceMinibatch.arrays documents (slices of the group's int32,
        int64 and float32 views of it)."""
        g, row = self._g, self._row
        w, f = g.words, g.floats
        n, off, end = row[6], self._w0, self._w1
        self._sequences = g.longs[off >> 1:(off >> 1) + n]
        off += 2 * n
        if g.corpora:
            self._corpus = w[off:off + n]
            off += n
        lengths: Dict[str, np.ndarray] = {}
        data: Dict[str, StreamArrays] = {}
        col = _FIXED
        for name, dim, sparse in g.streams:
            samples, entries, elided = row[col], row[col + 1], row[col + 2]
            col += 3
            lengths[name] = w[off:off + n]
            off += n
            if sparse:
                if elided:
                    rows, ones = _unit["rows"], _unit["ones"]
                    if len(ones) <= entries:
                        rows, ones = _units(entries)
                if elided & 1:
                    indptr = rows[:entries + 1]
                else:
                    indptr = w[off:off + samples + 1]
                    off += samples + 1
                indices = w[off:off + entries]
                off += entries
                if elided & 2:
                    values = ones[:entries]
                else:
                    values = f[off:off + entries]
                    off += entries
                data[name] = (indptr, indices, values)
            else:
                k = samples * dim
                if off + k > end:
                    off = end + 2  # past the buffer: refused below
                    break
                data[name] = f[off:off + k].reshape(-1, dim)
                off += k
        if off > end or end - off > 1:
            raise ValueError("batchprep: minibatch %d holds %d bytes of arrays, which its counts do not account for" % (
                self.step, 4 * (end - self._w0)))
        self._lengths, self._streams = lengths, data

    @property
    def sequences(self) -> np.ndarray:
        """numpy int64: the sequences' ordinals in file order."""
        if self._sequences is None:
            self._unpack()
        return self._sequences

    @property
    def corpus(self) -> Optional[np.ndarray]:
        """For a mixture, numpy int32: each sequence's corpus, its index in
        files (as read's "corpus"); sequences and ids are then ordinals and
        ids within that corpus. None when the call reads one corpus."""
        if not self._g.corpora:
            return None
        if self._sequences is None:
            self._unpack()
        return self._corpus

    @property
    def ids(self) -> List[str]:
        """The sequences' ids as written in the file."""
        if self._ids is None:
            n = self._row[6]
            self._ids = self._g.ids()[self._i0:self._i0 + n] if n else []
            if len(self._ids) != n:
                raise ValueError("batchprep: minibatch %d has %d sequences and %d ids" % (self.step, n, len(self._ids)))
        return self._ids

    @property
    def skipped(self) -> List[int]:
        """Ordinals of sequences whose data could not be parsed (within
        max_errors); a BatchprepWarning says why."""
        return list(self._notes[1]) if self._notes else []

    @property
    def skipped_corpus(self) -> Optional[List[int]]:
        """For a mixture, the corpus of each skipped ordinal (as read's
        "skipped_corpus"); None when the call reads one corpus."""
        if not self._g.corpora:
            return None
        return list(self._notes[2]) if self._notes else []

    @property
    def lengths(self) -> Dict[str, np.ndarray]:
        """{stream: numpy int32 samples per sequence}."""
        if self._lengths is None:
            self._unpack()
        return self._lengths

    def _data(self) -> Dict[str, StreamArrays]:
        if self._streams is None:
            self._unpack()
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
        g = self._g
        head = g.states[self._s0:self._s1]
        return head if self._row[5] & 4 else head + g.tail

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
        mixed = "" if self.corpus is None else ", corpora=%s" % np.bincount(self.corpus, minlength=self._g.corpora).tolist()
        return "Minibatch(step=%d, epoch=%d, sweep=%d, start=%d, end=%d, sequences=%d%s)" % (
            self.step, self.epoch, self.sweep, self.start, self.end, len(self.sequences), mixed)


def _rebuild(row: List[int], arrays: bytes, ids: bytes, state: bytes, streams: List[Tuple[str, int, bool]],
             notes: Optional[Tuple[List[str], List[int], List[int]]], corpora: int = 0) -> Minibatch:
    """A Minibatch from what __reduce__ keeps of it (unpickling)."""
    row = list(row)
    row[5] |= 4  # the state is whole
    g = _Group(np.frombuffer(arrays, dtype=_I4), ids, state, b"", streams, corpora)
    mb = Minibatch(g, row, 0, len(arrays) >> 2, 0, 0, len(state))
    mb._notes = notes
    return mb
