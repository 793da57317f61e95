"""The sequence half of the client: read() and MinibatchSource (SPEC C1)."""

from __future__ import annotations

import json
import warnings
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import grpc

from . import batchprep_pb2 as pb
from .errors import BatchprepError, BatchprepWarning
from .minibatch import Minibatch, from_columns
from .request import UNLIMITED_EPOCHS, INT32_MAX, Files, State, check_int, sequence_request
from .server import Connection, settle
from .shared import Ring, usable as shared_memory_usable


class _Closes:
    """close() on leaving a with block and when collected."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> "_Closes":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _nothing_to_read(req: pb.SequenceRequest) -> Optional[str]:
    """Why a request that delivered no minibatch had nothing to read, when
    its start or state lies past its epochs (as `batchprep read` says)."""
    if req.HasField("start"):
        return ("nothing to read: start %d lies at or past the end of the last requested epoch (epochs=%d); "
                "ask for more epochs" % (req.start, req.epochs))
    if req.state:
        try:
            st = json.loads(req.state)
            epoch, pos = int(st["epoch"]), int(st["position"])
        except (ValueError, KeyError, TypeError):
            return None
        if epoch >= req.epochs:
            return ("nothing to read: the state is at epoch %d (position %d), and epochs=%d ends before it; "
                    "ask for epochs=%d or more" % (epoch, pos, req.epochs, epoch + 1))
    return None


class _Stream(_Closes):
    """An iterator over one SequenceGroups call with columns (several
    minibatches per message, in stream order); close() cancels it."""

    def __init__(self, conn: Connection, req: pb.SequenceRequest, own_conn: bool) -> None:
        self._conn: Optional[Connection] = conn
        self._own, self._req, self._delivered = own_conn, req, 0
        self._call: Any = None
        self._group: List[Minibatch] = []
        self._next = 0
        self._tail = b""  # the call's state tail (SequenceGroup.state_tail)
        self._streams: List[Tuple[str, int, bool]] = []
        self._corpora = 0  # a mixture's corpora (SequenceGroup.corpora, in the first message)
        self._ring: Optional[Ring] = Ring() if req.shared_memory else None
        self._call = conn.sequence_groups(req, metadata=conn.metadata)

    def __iter__(self) -> "_Stream":
        return self

    def __next__(self) -> Minibatch:
        if self._next >= len(self._group):
            if self._call is None:
                raise StopIteration
            try:
                g = next(self._call)
                if len(g.streams):
                    self._streams = [(s.name, s.dim, s.sparse) for s in g.streams]
                    self._corpora = g.corpora
                if g.state_tail:
                    self._tail = g.state_tail
                arrays = g.arrays
                if g.HasField("shared"):
                    if self._ring is None:
                        raise ValueError("batchprep: the server sent shared memory that was not asked for")
                    arrays = self._ring.take(g.shared)
                self._group, self._next = from_columns(g, self._streams, self._tail, arrays, self._corpora), 0
            except StopIteration:
                self.close()
                if self._delivered == 0:
                    why = _nothing_to_read(self._req)
                    if why:
                        warnings.warn(why, BatchprepWarning, stacklevel=2)
                raise
            except grpc.RpcError as e:
                self.close()
                raise BatchprepError(e.code(), e.details()) from None
            except Exception:  # e.g. out of file descriptors: the stream cannot go on; stop its server now
                self.close()
                raise
        mb = self._group[self._next]
        self._next += 1
        self._delivered += 1
        if mb._notes is not None:
            for w in mb._notes[0]:
                warnings.warn(w, BatchprepWarning, stacklevel=2)
        return mb

    def close(self) -> None:
        """Cancel the call (and stop the local server the iterator started)."""
        call, self._call = self._call, None
        if call is not None:
            call.cancel()
            settle(call)
        if self._ring is not None:
            self._ring.close()
        if self._own and self._conn is not None:
            self._conn.close()
            self._conn = None


def read(files: Files, streams: Sequence[str], mb: Union[str, int] = "256",
         randomize: str = "window", seed: int = 0, epochs: int = 1, workers: int = 1, rank: int = 0,
         state: Optional[State] = None, max_minibatches: Optional[int] = None, address: Optional[str] = None,
         token: Optional[str] = None, root_certificates: Optional[bytes] = None, cache_dir: Optional[str] = None,
         **kw: Any) -> Iterator[Minibatch]:
    """The minibatches of `batchprep read` for the same choices (SPEC C1).

    files is one corpus file, CTF or Parquet (a path, or a list holding
    one; a path or s3://BUCKET/KEY), or a weighted mixture of corpora as `batchprep read --mix` reads
    it (docs/mixtures.md): {path: weight} or [(path, weight), ...] in --mix
    order, each weight a positive number (0.7) or "samples:N"; each
    minibatch's .corpus then names each sequence's corpus. streams are
    NAME:DIM or NAME:DIM:sparse. Keywords mirror read's flags with read's
    defaults: mb, randomize, seed, epochs, workers, rank, split ("balanced"
    or "chunks": each rank the sequences of its own chunks), max_minibatches,
    window_chunks, window_samples, chunk_bytes, chunk_sequences (None: the
    server's default), epoch_size, cut_at_sweep, start, defines_mb_size,
    label, max_errors, group_bytes. state (a Minibatch's .state) resumes
    right after that minibatch.

    Without address a private `batchprep serve` is started (BATCHPREP_BIN,
    else batchprep on PATH) and stopped with the iterator; it reads s3://
    objects with the user's AWS configuration, caching them in cache_dir
    (None: the server's default; with address= a ValueError: a server's
    cache is its own). The iterator has
    close() and is a context manager. Raises BatchprepError when the server
    refuses the request, ValueError for an out-of-range integer."""
    req = sequence_request(files, streams, mb=mb, randomize=randomize, seed=seed, epochs=epochs, workers=workers,
                           rank=rank, state=state, max_minibatches=max_minibatches, **kw)
    conn = Connection(address, token=token, root_certificates=root_certificates, cache_dir=cache_dir)
    try:
        req.shared_memory = conn.server is not None and shared_memory_usable()
        return _Stream(conn, req, own_conn=True)
    except BaseException:  # e.g. out of file descriptors: stop the server now
        conn.close()
        raise


class MinibatchSource(_Closes):
    """CNTK's calling style: next_minibatch(k) with any k per call (SPEC C1).

    Takes read()'s keywords (cache_dir too) except mb and max_minibatches (the sizes come
    from next_minibatch). Epochs are unlimited unless epochs= is given. While
    k stays the same the source reads ahead on one stream; a new k restarts
    the stream from the current state, so the sequence order never depends
    on the sizes asked."""

    def __init__(self, files: Files, streams: Sequence[str], address: Optional[str] = None,
                 token: Optional[str] = None, root_certificates: Optional[bytes] = None,
                 epochs: Optional[int] = None, cache_dir: Optional[str] = None, **kw: Any) -> None:
        self._stream: Optional[_Stream] = None
        self._conn: Optional[Connection] = None
        for name in ("mb", "max_minibatches", "k"):
            if name in kw:
                raise TypeError("MinibatchSource: %s= is not used: the sizes come from next_minibatch(k)" % name)
        self._files, self._streams, self._kw = files, streams, kw
        self._epochs = UNLIMITED_EPOCHS if epochs is None else check_int("epochs", epochs, 1, INT32_MAX)
        self._state: Optional[State] = kw.pop("state", None)
        self._start: Optional[int] = kw.pop("start", None)
        sequence_request(files, streams, epochs=self._epochs, state=self._state, start=self._start, **kw)
        self._k: Optional[int] = None
        self._conn = Connection(address, token=token, root_certificates=root_certificates, cache_dir=cache_dir)

    def next_minibatch(self, k: int) -> Optional[Minibatch]:
        """The next minibatch of at most k samples (whole sequences; the
        first is taken even if larger), or None when the epochs are done."""
        k = check_int("k", k, 1, INT32_MAX)
        if self._conn is None:
            raise ValueError("MinibatchSource is closed")
        if self._stream is None or self._k != k:
            self._close_stream()
            req = sequence_request(self._files, self._streams, epochs=self._epochs, state=self._state,
                                   start=self._start if self._state is None else None, k=k, **self._kw)
            req.shared_memory = self._conn.server is not None and shared_memory_usable()
            self._stream, self._k = _Stream(self._conn, req, own_conn=False), k
        try:
            mb = next(self._stream)
        except StopIteration:
            self._stream = None
            return None
        self._state, self._start = mb.state, None
        return mb

    @property
    def state(self) -> Optional[State]:
        """The state after the last minibatch (None before the first)."""
        return self._state

    def restore(self, state: State) -> None:
        """Continue right after the minibatch whose state this is."""
        self._close_stream()
        self._state, self._start = state, None

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def close(self) -> None:
        """Cancel the stream and stop the local server, if one was started."""
        self._close_stream()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
