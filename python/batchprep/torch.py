"""PyTorch glue: SequenceDataset, an IterableDataset whose state_dict() and
load_state_dict() hold the data position (in the manner of torchdata's
StatefulDataLoader) so that a training checkpoint resumes the data exactly,
and helpers for one-hot streams and padding."""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from collections import deque
import uuid
import weakref
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from . import loop_position
from .client import _Stream
from .minibatch import Minibatch
from .request import INT32_MAX, Files, check_int, sequence_request, state_bytes
from .server import Connection, check_cache_dir
from .shared import usable as shared_memory_usable

_STATE_VERSION = 1


def minibatch_tensors(mb: Minibatch) -> Dict[str, Any]:
    """mb.to_torch(): tensors that own a copy of the arrays."""
    return mb.to_torch()


def sparse_ids(mb: Minibatch, name: str) -> np.ndarray:
    """For a one-hot sparse stream: the index of each sample (int64)."""
    indptr, indices, _ = mb[name]
    if len(indices) != len(indptr) - 1:
        raise ValueError("stream %s is not one entry per sample" % name)
    return indices.astype(np.int64)


def padded(mb: Minibatch, values: np.ndarray, name: str, pad: Any = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Per-sample values (first axis = samples of stream name, in sequence
    order) as a (sequences, longest, ...) array padded with pad, and the
    lengths (int64)."""
    lengths = mb.lengths[name]
    n, t = len(lengths), int(lengths.max()) if len(lengths) else 0
    out = np.full((n, t) + values.shape[1:], pad, dtype=values.dtype)
    ends = np.cumsum(lengths)
    for i, (e, l) in enumerate(zip(ends, lengths)):
        out[i, :l] = values[e - l:e]
    return out, lengths.astype(np.int64)


# The datasets of this process by token: a minibatch that a DataLoader
# worker hands to the training process records its state here when it is
# unpickled (see _Handoff).
_datasets: "weakref.WeakValueDictionary[str, SequenceDataset]" = weakref.WeakValueDictionary()


# What _loader_buffer returns for an item that the DataLoader unpickles only
# to drop it: a new iteration of persistent workers (its _reset) drains what
# the workers made for the iteration the loop left.
_DROPPED: Dict[int, Tuple[Any, ...]] = {}


def _loader_buffer() -> Optional[Dict[int, Tuple[Any, ...]]]:
    """The reorder buffer of the DataLoader iterator that is unpickling an
    item in this thread: torch's _MultiProcessingDataLoaderIter._task_info,
    {task index: (worker,) or (worker, item)}; an entry with an item holds
    an item that arrived before the one the loop waits for. _DROPPED when
    the iterator unpickles or takes it in its _reset; None when not found
    (another torch)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    f = sys._getframe(2)
    for _ in range(12):
        if f is None:
            return None
        it = f.f_locals.get("self")
        info = getattr(it, "_task_info", None)
        if isinstance(info, dict):
            if f.f_code.co_name == "_next_data":
                return info
            if f.f_code.co_name == "_reset":
                return _DROPPED
        f = f.f_back
    return None


# read()'s keywords that choose the connection, not the request.
_CONNECTION_KEYWORDS = ("address", "token", "root_certificates", "cache_dir")

# Connections a forked DataLoader worker inherited (SequenceDataset._connection).
_inherited: "list[Connection]" = []


def _close_connection(conn: Connection, pid: int) -> None:
    """Close a dataset's connection when the dataset goes, in the process
    that made it only."""
    if os.getpid() == pid:
        conn.close()


def _handed_over(token: str, state: bytes, item: Any) -> Any:
    ds = _datasets.get(token)
    if ds is not None and get_worker_info() is None:
        q = _pinning_queue()
        if q is not None:
            # Unpickled by torch's pin_memory thread, ahead of the loop: the
            # state is recorded when the loop's thread takes the pinned item
            # from q (_PinnedQueue).
            if type(q) is queue.Queue:
                q.__class__ = _PinnedQueue
                q._bp_pinned = deque()  # type: ignore[attr-defined]
            if isinstance(q, _PinnedQueue):
                return _Pinning(q, token, state, item)
        _received(ds, state)
    return item


def _received(ds: "SequenceDataset", state: bytes) -> None:
    """In the training process's main thread, as the DataLoader takes an
    item in: record its state with the dataset (see _Handoff)."""
    ds._serve_position()
    buffer = _loader_buffer()
    if buffer is not _DROPPED:
        ds._arrived(state, buffer)


def _pinning_queue() -> "Optional[queue.Queue[Any]]":
    """The queue of pinned items when this thread is torch's pin_memory
    thread unpickling an item (in its _pin_memory_loop), else None."""
    if threading.current_thread() is threading.main_thread():
        return None
    f = sys._getframe(2)
    for _ in range(16):
        if f is None:
            return None
        if f.f_code.co_name in ("_pin_memory_loop", "do_one_step"):
            q = f.f_locals.get("out_queue")
            return q if isinstance(q, queue.Queue) else None
        f = f.f_back
    return None


class _Pinning:
    """What an item becomes in torch's pin_memory thread: torch calls its
    pin_memory(), which pins the item itself and lists it, with its state,
    with the queue the thread then puts it in."""

    __slots__ = ("queue", "token", "state", "item")

    def __init__(self, q: "_PinnedQueue", token: str, state: bytes, item: Any) -> None:
        self.queue, self.token, self.state, self.item = q, token, state, item

    def pin_memory(self, device: Any = None) -> Any:
        from torch.utils.data._utils.pin_memory import pin_memory
        item = pin_memory(self.item) if device is None else pin_memory(self.item, device)
        self.queue._bp_pinned.append((item, self.token, self.state))
        return item


class _PinnedQueue(queue.Queue):  # type: ignore[type-arg]
    """torch's queue of pinned items (the pin_memory thread puts, the
    DataLoader takes in the loop's thread), once an item of ours went
    through it: taking one of ours records its state with the dataset as
    the unpickling of an unpinned item does, in the same thread and under
    the same loader frames. _get runs under the queue's lock in the taking
    thread, even for a get begun before the class was set. Our items leave
    in the order they were pinned (one thread pins and puts them), so an
    item taken is ours when it is the first one listed."""

    _bp_pinned: "deque[Tuple[Any, str, bytes]]"

    def _get(self) -> Any:
        got = queue.Queue._get(self)  # type: ignore[attr-defined]
        pinned = self._bp_pinned
        if pinned and type(got) is tuple and len(got) == 2 and got[1] is pinned[0][0]:
            _, token, state = pinned.popleft()
            ds = _datasets.get(token)
            if ds is not None:
                _received(ds, state)
        return got


class _Handoff:
    """What the DataLoader worker that reads the stream yields: unpickled in
    the training process it becomes the item itself, and records the item's
    state with the dataset. States arrive in stream order (one worker
    produces); those of items the DataLoader holds back in its reorder
    buffer (arrived while it waited for another worker's end) are not yet
    delivered, so the dataset's position is the state of the last arrival
    not in that buffer."""

    __slots__ = ("token", "state", "item")

    def __init__(self, token: str, state: bytes, item: Any) -> None:
        self.token, self.state, self.item = token, state, item

    def __reduce__(self) -> Tuple[Any, Tuple[str, bytes, Any]]:
        return (_handed_over, (self.token, self.state, self.item))


def _no_length(kw: Dict[str, Any]) -> Optional[str]:
    """Why a dataset with read() keywords kw has no len(), or None."""
    size = str(kw.get("epoch_size", "full")).strip()
    if size == "full":
        return ("epoch_size='full' (the default) is one sweep over the corpus, whose minibatches only reading it "
                "tells; give epoch_size as a number of samples for a length")
    if size == "inf":
        return "epoch_size='inf' is one endless epoch, which has no length"
    if not size.isdigit() or int(size) == 0:
        return "epoch_size=%r is not a number of samples" % (kw.get("epoch_size"),)
    mb = str(kw.get("mb", "256")).strip()
    if not mb.isdigit() or int(mb) == 0:
        return ("mb=%r is a schedule, not one minibatch size: the count changes with the epoch; give one size "
                "(mb=256) for a length" % (kw.get("mb"),))
    label, by = kw.get("label") or None, kw.get("defines_mb_size") or None
    if label != by:
        return ("the epoch counts the samples of %s while mb counts those of %s (label=%r, defines_mb_size=%r): "
                "minibatches per epoch depend on the corpus" % (
                    "stream " + label if label else "the lines", "stream " + by if by else "the lines", label, by))
    if kw.get("cut_at_sweep"):
        return "cut_at_sweep=True cuts a minibatch at each sweep end, which adds minibatches where epochs cross one"
    return None


class SequenceDataset(IterableDataset):
    """Minibatches of read() as a torch IterableDataset. Use it with
    DataLoader(ds, batch_size=None): each item is already a minibatch.

    Each iteration is one epoch of the timeline (epoch_size, as in CNTK:
    "full" is one sweep over the corpus, N a number of samples, "inf" one
    endless epoch), continuing where the last iteration stopped:
    ``for e in range(3): for mb in DataLoader(ds, batch_size=None)`` gives
    epochs 0, 1 and 2. epochs (None: unlimited) bounds the epochs over all
    iterations; an iteration past them raises RuntimeError. An iteration
    left early (break) continues at the next minibatch the next time.

    rank and workers (ranks, SPEC A4) default to torchrun's RANK and
    WORLD_SIZE; every rank holds the same position, so rank 0's state_dict()
    serves all. transform, when given, maps each Minibatch to what the loop
    receives. files (one corpus, or a mixture) and other keywords are read()'s.

    DataLoader num_workers >= 1: worker 0 reads the stream (and runs
    transform: put per-minibatch work there, not in a collate_fn, which
    would see the wrapper that carries each item's state), the others
    yield nothing; the server parses in parallel anyway. state_dict() in
    the training process follows the items the loop has received. With
    persistent_workers=True (Linux) the reading worker asks the training
    process where its loop stands at the start of each later iteration, so
    a loop left early or a load_state_dict() between iterations is followed
    as without it. With pin_memory=True torch's pinning thread takes items
    ahead of the loop; a state is recorded when the loop's thread takes the
    pinned item in, so state_dict() is as exact (a torch whose pinning
    thread this does not recognize makes state_dict() raise, saying so).

    The process that iterates (this one with num_workers=0, or a
    persistent worker) keeps its private server from one iteration to the
    next, and the server keeps the corpus's index: an epoch after the first
    starts without an index pass. A worker that is not persistent starts a
    server every epoch, which opens a CTF file's index from the cache
    directory (cache_dir=) where the first epoch's server left it.

    len() is the minibatches of one epoch when the epoch is a number of
    samples and mb one size; otherwise it raises TypeError saying why (see
    __len__)."""

    def __init__(self, files: Files, streams: Sequence[str], rank: Optional[int] = None,
                 workers: Optional[int] = None, transform: Optional[Callable[[Minibatch], Any]] = None,
                 epochs: Optional[int] = None, **kw: Any) -> None:
        super().__init__()
        for name in ("max_minibatches",):
            if name in kw:
                raise TypeError("SequenceDataset: %s= is not supported: each iteration is one epoch" % name)
        check_cache_dir(kw.get("address"), kw.get("cache_dir"))
        self.files, self.streams, self.kw, self.transform = files, streams, kw, transform
        self.rank = int(os.environ.get("RANK", 0)) if rank is None else rank
        self.workers = int(os.environ.get("WORLD_SIZE", 1)) if workers is None else workers
        self.epochs = None if epochs is None else check_int("epochs", epochs, 1, INT32_MAX)
        state = kw.pop("state", None)
        self._state: Optional[bytes] = None if state is None else state_bytes(state)
        self._start: Optional[int] = kw.pop("start", None)
        # From DataLoader workers: the states of the latest items, in arrival
        # order, and the loader's reorder buffer (see _Handoff); None when
        # the loader's buffer could not be found (another torch).
        self._arrivals: "deque[bytes]" = deque(maxlen=4096)
        self._buffer: Optional[Dict[int, Tuple[Any, ...]]] = {}
        self._iterated = False      # this copy was iterated in a DataLoader worker
        self._handed = False        # this copy handed items over from a DataLoader worker
        self._token = uuid.uuid4().hex
        # In the training process, once items arrive from workers: answers
        # persistent workers' questions about the loop's position.
        self._service: Optional[loop_position.PositionService] = None
        # The connection of the process that iterates, kept across its
        # iterations (_connection).
        self._conn: Optional[Connection] = None
        self._conn_pid = 0
        _datasets[self._token] = self

    def __getstate__(self) -> Dict[str, Any]:
        d = self.__dict__.copy()
        d["_service"] = None  # the training process's thread stays there
        d["_conn"], d["_conn_pid"] = None, 0  # a worker connects for itself
        return d

    def _connection(self) -> Connection:
        """This process's connection, made at its first iteration and kept
        for the next ones: its server's reader cache keeps the corpus's
        index, so an epoch after the first opens the corpus without an index
        pass. A forked DataLoader worker connects for itself; the copy of
        another process's connection it inherited is kept, untouched."""
        conn, pid = self._conn, os.getpid()
        if conn is not None and self._conn_pid != pid:
            _inherited.append(conn)  # never closed nor freed here
            conn = None
        if conn is not None and conn.server is not None and not conn.server.alive():
            conn.close()
            conn = None
        if conn is None:
            kw = self.kw
            conn = Connection(kw.get("address"), token=kw.get("token"), root_certificates=kw.get("root_certificates"),
                              cache_dir=kw.get("cache_dir"))
            self._conn, self._conn_pid = conn, pid
            weakref.finalize(self, _close_connection, conn, pid)
        return conn

    def _serve_position(self) -> None:
        """In the training process, once an item came from a worker: answer
        persistent workers' questions (loop_position)."""
        if self._service is None and loop_position.available():
            try:
                self._service = loop_position.PositionService(self)
            except OSError:
                pass  # a persistent worker then says it cannot learn the position

    def _arrived(self, state: bytes, buffer: Optional[Dict[int, Tuple[Any, ...]]]) -> None:
        if buffer is not self._buffer and self._arrivals and self._buffer is not None:
            self._state = self._position()  # a new DataLoader iteration: settle the last one
            self._arrivals.clear()
        self._arrivals.append(state)
        self._buffer, self._start = buffer, None

    def _position(self) -> Optional[bytes]:
        """The state after the last item the loop received."""
        if self._arrivals:
            if self._buffer is None:
                raise RuntimeError("SequenceDataset: DataLoader items were taken in a way this torch (%s) does not show "
                                   "(its pin_memory thread, or its loader's reorder buffer, were not found): the "
                                   "position is not known; use pin_memory=False, or save mb.state of the last "
                                   "minibatch used" % torch.__version__)
            held = sum(1 for info in self._buffer.values() if len(info) == 2)
            if held < len(self._arrivals):
                return self._arrivals[-1 - held]
        return self._state

    def _loop_position(self) -> Dict[str, Any]:
        """For a persistent worker (loop_position): where the next
        iteration starts, as the training process knows it."""
        state = self._position()
        return {"state": None if state is None else state.decode(), "start": self._start}

    def _follow_loop(self) -> None:
        """In a persistent worker, before a later iteration: take the
        training process's position (the loop may have left early, or
        loaded a state_dict)."""
        if not loop_position.available():
            raise RuntimeError("SequenceDataset: DataLoader persistent_workers=True needs Linux here (a worker asks "
                               "the training process where its loop stands); use persistent_workers=False")
        answer = loop_position.ask(self._token)
        if answer is None:
            if self._handed:
                # Every item handed over reached the training process (the
                # loader takes them all before it starts a new iteration),
                # which then answers: here nobody does.
                raise RuntimeError("SequenceDataset: a persistent DataLoader worker cannot reach the process it "
                                   "hands items to (pid %d) to learn where the loop stands; use "
                                   "persistent_workers=False" % loop_position.loop_pid())
            return  # nothing was handed over: what this copy holds is the position
        self._state = None if answer["state"] is None else answer["state"].encode()
        self._start = answer["start"]

    def __iter__(self) -> Iterator[Any]:
        info = get_worker_info()
        if info is not None:
            if info.id != 0:
                return
            if self._iterated:  # persistent_workers=True: a later iteration
                self._follow_loop()
            self._iterated = True
        state = self._position()
        if info is None:  # this process iterates: what workers delivered is settled
            self._state = state
            self._arrivals.clear()
            self._buffer = {}
        epoch = 0 if state is None else int(json.loads(state).get("epoch", 0))
        if self.epochs is not None and epoch >= self.epochs:
            raise RuntimeError("SequenceDataset: all %d epochs (epochs=%d) were delivered; give a larger epochs= "
                               "(None: unlimited), or load_state_dict() an earlier state" % (self.epochs, self.epochs))
        # Stop at the end of this epoch: the server ends the stream there
        # when the epoch is known; a start= position ends it at the first
        # minibatch that ends an epoch.
        limit = epoch + 1 if self._start is None else (self.epochs or INT32_MAX)
        req = sequence_request(self.files, self.streams, workers=self.workers, rank=self.rank, state=state,
                               start=self._start, epochs=limit,
                               **{k: v for k, v in self.kw.items() if k not in _CONNECTION_KEYWORDS})
        conn = self._connection()
        req.shared_memory = conn.server is not None and shared_memory_usable()
        with _Stream(conn, req, own_conn=False) as it:
            for mb in it:
                item = self.transform(mb) if self.transform else mb
                if info is None:
                    self._state, self._start = mb.state_bytes, None
                    yield item
                else:
                    self._state, self._start = mb.state_bytes, None
                    self._handed = True
                    yield _Handoff(self._token, mb.state_bytes, item)
                if mb.end_of_epoch:
                    break

    def __len__(self) -> int:
        """The minibatches of one whole epoch, for progress bars: ceil(epoch
        size / mb), when the epoch is a number of samples (epoch_size=N),
        mb is one size (not a schedule), the same samples count both (label
        and defines_mb_size not given, or the same stream) and minibatches
        are not cut at sweep ends (cut_at_sweep=False). That is exact when
        every minibatch holds mb samples, as with one-sample sequences;
        minibatches hold whole sequences, so with longer ones an epoch can
        take more. Otherwise (epoch_size "full" or "inf", a schedule, ...)
        it raises TypeError saying why: the count would depend on the
        corpus's sequences, which only reading them tells. Every rank gets
        a step for each minibatch, so the count is the same on every rank."""
        why = _no_length(self.kw)
        if why:
            raise TypeError("len(SequenceDataset): " + why)
        return -(-int(str(self.kw["epoch_size"]).strip()) // int(str(self.kw.get("mb", "256")).strip()))

    def state_dict(self) -> Dict[str, Any]:
        """The data position after the last minibatch the loop received (a
        small dict: save it with the model's checkpoint)."""
        state = self._position()
        return {"version": _STATE_VERSION, "state": None if state is None else json.loads(state)}

    def load_state_dict(self, sd: Dict[str, Any]) -> None:
        """Resume right after the position in sd at the next iteration."""
        if not isinstance(sd, dict) or sd.get("version") != _STATE_VERSION or "state" not in sd:
            raise ValueError("SequenceDataset.load_state_dict: not a state_dict of this class: %r" % (sd,))
        self._state = None if sd["state"] is None else state_bytes(sd["state"])
        self._start = None
        self._arrivals.clear()
        self._buffer = {}
