"""The sequence half: read() and MinibatchSource (SPEC C1)."""

import json

import grpc
import numpy as np

from . import batchprep_pb2 as pb
from .server import Connection

_I4, _I8, _F4 = np.dtype("<i4"), np.dtype("<i8"), np.dtype("<f4")
_unit = {"rows": np.zeros(0, dtype=_I4), "ones": np.zeros(0, dtype=_F4)}


def _units(n):
    """Read-only views of 0..n (int32, the indptr of n one-entry rows) and
    of n ones (float32): what a request with elide_unit_sparse leaves out."""
    if len(_unit["ones"]) < n + 1:
        m = max(n + 1, 2 * len(_unit["ones"]), 4096)
        rows, ones = np.arange(m, dtype=_I4), np.ones(m, dtype=_F4)
        rows.flags.writeable = ones.flags.writeable = False
        _unit["rows"], _unit["ones"] = rows, ones
    return _unit["rows"][:n + 1], _unit["ones"][:n]


class Minibatch:
    """One minibatch: metadata as in `batchprep read --format jsonl`, and
    each stream's data as numpy arrays over the message's bytes (no copy).
    The arrays are made on first access and kept, so a trainer pays only for
    the fields it reads."""

    __slots__ = ("step", "epoch", "sweep", "start", "end", "end_of_sweep", "end_of_epoch",
                 "_msg", "_sequences", "_ids", "_lengths", "_streams")

    def __init__(self, msg):
        self.step, self.epoch, self.sweep = msg.step, msg.epoch, msg.sweep
        self.start, self.end = msg.start, msg.end
        self.end_of_sweep, self.end_of_epoch = msg.end_of_sweep, msg.end_of_epoch
        self._msg = msg
        self._sequences = self._ids = self._lengths = self._streams = None

    @property
    def sequences(self):
        """numpy int64: the sequences' ordinals in file order."""
        if self._sequences is None:
            self._sequences = np.frombuffer(self._msg.sequences, dtype=_I8)
        return self._sequences

    @property
    def ids(self):
        """The sequences' ids (list of str)."""
        if self._ids is None:
            self._ids = list(self._msg.ids)
        return self._ids

    @property
    def skipped(self):
        """Ordinals of sequences whose data could not be parsed."""
        return list(self._msg.skipped)

    @property
    def lengths(self):
        """{stream: numpy int32 samples per sequence}."""
        if self._lengths is None:
            self._lengths = {s.name: np.frombuffer(s.lengths, dtype=_I4) for s in self._msg.streams}
        return self._lengths

    def _data(self):
        if self._streams is None:
            d = {}
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

    def __getitem__(self, name):
        """Dense: float32 (samples, dim); sparse: (indptr, indices, values)."""
        return self._data()[name]

    def keys(self):
        return self._data().keys()

    @property
    def state(self):
        """The state to resume right after this minibatch (a dict)."""
        return json.loads(self._msg.state)

    @property
    def samples(self):
        """Samples per stream, as read's "samples"."""
        return {k: int(v.sum()) for k, v in self.lengths.items()}

    def to_torch(self):
        """The streams as torch tensors sharing the arrays' memory: dense
        (samples, dim) float32; sparse a tuple (indptr, indices, values)."""
        from .torch import minibatch_tensors
        return minibatch_tensors(self)

    def __repr__(self):
        return "Minibatch(step=%d, epoch=%d, sweep=%d, start=%d, end=%d, sequences=%d)" % (
            self.step, self.epoch, self.sweep, self.start, self.end, len(self.sequences))


def _request(files, streams, mb="256", randomize="window", seed=0, epochs=1, workers=1, rank=0, state=None,
             max_minibatches=None, window_chunks=None, window_samples=None, chunk_bytes=None,
             chunk_sequences=None, epoch_size="full", cut_at_sweep=False, start=None, defines_mb_size=None,
             label=None, max_errors=0, k=0, group_bytes=None):
    if isinstance(files, str):
        files = [files]
    r = pb.SequenceRequest(files=list(files), streams=list(streams), mb=str(mb), randomize=randomize,
                           seed=int(seed), epochs=int(epochs), workers=int(workers), rank=int(rank),
                           epoch_size=str(epoch_size), cut_at_sweep=bool(cut_at_sweep), max_errors=int(max_errors),
                           k=int(k), elide_unit_sparse=True)
    if max_minibatches is not None:
        r.max_minibatches = int(max_minibatches)
        if r.max_minibatches == 0:
            raise ValueError("max_minibatches 0: use None for no limit")
    for name, v in (("window_chunks", window_chunks), ("window_samples", window_samples),
                    ("chunk_bytes", chunk_bytes), ("chunk_sequences", chunk_sequences)):
        if v is not None:
            if int(v) < 1:
                raise ValueError("%s %r: must be >= 1" % (name, v))
            setattr(r, name, int(v))
    if group_bytes is not None:
        if not 1 <= int(group_bytes) <= 64 << 20:
            raise ValueError("group_bytes %r: must be in [1, %d]" % (group_bytes, 64 << 20))
        r.group_bytes = int(group_bytes)
    if start is not None:
        r.start = int(start)
    if defines_mb_size:
        r.defines_mb_size = defines_mb_size
    if label:
        r.label = label
    if state is not None:
        r.state = json.dumps(state).encode() if isinstance(state, dict) else bytes(state)
    return r


class _Closes:
    """close() on leaving a with block and when collected."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class _Stream(_Closes):
    """An iterator over one SequenceGroups call (several minibatches per
    message, in stream order); close() cancels it."""

    def __init__(self, conn, req, own_conn):
        self._conn, self._own = conn, own_conn
        self._call = conn.sequence_groups(req, metadata=conn.metadata)
        self._group, self._next = (), 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._next < len(self._group):
            self._next += 1
            return Minibatch(self._group[self._next - 1])
        try:
            self._group, self._next = next(self._call).minibatches, 1
            return Minibatch(self._group[0])
        except StopIteration:
            self.close()
            raise
        except grpc.RpcError as e:
            self.close()
            raise BatchprepError(e.code(), e.details()) from None

    def close(self):
        if self._call is not None:
            self._call.cancel()
            self._call = None
        if self._own and self._conn is not None:
            self._conn.close()
            self._conn = None


class BatchprepError(RuntimeError):
    """A refused or failed call: code is the grpc.StatusCode, details the
    server's message (naming the wrong request field)."""

    def __init__(self, code, details):
        super().__init__("%s: %s" % (code.name if code else "error", details))
        self.code, self.details = code, details


def read(files, streams, mb="256", randomize="window", seed=0, epochs=1, workers=1, rank=0, state=None,
         max_minibatches=None, address=None, token=None, root_certificates=None, **kw):
    """Minibatches of `batchprep read` for the same choices (SPEC C1).

    Keywords mirror read's flags (window_chunks, window_samples, chunk_bytes,
    chunk_sequences, epoch_size, cut_at_sweep, start, defines_mb_size, label,
    max_errors, group_bytes); state resumes right after the minibatch whose .state it is.
    The iterator has close(); it is a context manager."""
    req = _request(files, streams, mb=mb, randomize=randomize, seed=seed, epochs=epochs, workers=workers,
                   rank=rank, state=state, max_minibatches=max_minibatches, **kw)
    conn = Connection(address, token=token, root_certificates=root_certificates)
    return _Stream(conn, req, own_conn=True)


_UNLIMITED_EPOCHS = 2**31 - 1


class MinibatchSource(_Closes):
    """CNTK's calling style: next_minibatch(k) with any k per call (SPEC C1).

    Epochs are unlimited unless epochs= is given. While k stays the same the
    source reads ahead on one stream; a new k restarts the stream from the
    current state, so the sequence order never depends on the sizes asked."""

    def __init__(self, files, streams, address=None, token=None, root_certificates=None, epochs=None, **kw):
        if "max_minibatches" in kw or "k" in kw:
            raise TypeError("MinibatchSource takes its sizes from next_minibatch(k)")
        self._files, self._streams, self._kw = files, streams, kw
        self._epochs = _UNLIMITED_EPOCHS if epochs is None else int(epochs)
        self._conn = Connection(address, token=token, root_certificates=root_certificates)
        self._state = kw.pop("state", None)
        self._start = kw.pop("start", None)
        _request(files, streams, **kw)  # check the keywords now
        self._stream, self._k = None, None

    def next_minibatch(self, k):
        """The next minibatch of at most k samples (whole sequences; the
        first is taken even if larger), or None when the epochs are done."""
        k = int(k)
        if k < 1:
            raise ValueError("k %d: must be >= 1" % k)
        if self._stream is None or self._k != k:
            self._close_stream()
            req = _request(self._files, self._streams, epochs=self._epochs, state=self._state,
                           start=self._start if self._state is None else None, k=k, **self._kw)
            self._stream, self._k = _Stream(self._conn, req, own_conn=False), k
        try:
            mb = next(self._stream)
        except StopIteration:
            self._stream = None
            return None
        self._state, self._start = mb.state, None
        return mb

    @property
    def state(self):
        """The state after the last minibatch (None before the first)."""
        return self._state

    def restore(self, state):
        """Continue right after the minibatch whose state this is."""
        self._close_stream()
        self._state, self._start = state, None

    def _close_stream(self):
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def close(self):
        self._close_stream()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
