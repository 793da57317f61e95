"""Building and checking a SequenceRequest: the same limits as the server
(proto field widths and serve/readopts' checks), with a ValueError that names
the argument as the caller wrote it."""

from __future__ import annotations

import decimal
import json
import math
import numbers
import operator
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import batchprep_pb2 as pb

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
GROUP_BYTES_MAX = 64 << 20  # serve: SequenceRequest.group_bytes
UNLIMITED_EPOCHS = INT32_MAX

State = Union[Mapping[str, Any], bytes, str]

# A corpus's weight in a mixture: a positive number, or "samples:N" (N
# samples per epoch), as `batchprep read --mix`'s WEIGHT.
Weight = Union[int, float, decimal.Decimal, str]
# One corpus (a path, or a list holding one), or a mixture: {path: weight},
# or a list of (path, weight) pairs (which may name a file twice).
Files = Union[str, Sequence[str], Mapping[str, Weight], Sequence[Tuple[str, Weight]]]


def check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """value as an int in [lo, hi], else ValueError (TypeError for a
    non-integer) naming the argument."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError("%s %r: want an integer" % (name, value)) from None
    if not lo <= v <= hi:
        raise ValueError("%s %d: must be in [%d, %d]" % (name, v, lo, hi))
    return v


def state_bytes(state: State) -> bytes:
    """A state as the server takes it: JSON bytes."""
    if isinstance(state, Mapping):
        return json.dumps(state).encode()
    if isinstance(state, str):
        return state.encode()
    return bytes(state)


def _weight(path: str, w: Any) -> str:
    """w as --mix's WEIGHT text, or TypeError/ValueError naming the file."""
    if isinstance(w, str):
        return w.strip()
    if isinstance(w, bool) or not isinstance(w, (numbers.Real, decimal.Decimal)):
        raise TypeError("files: %r: weight %r: want a positive number or 'samples:N'" % (path, w))
    if isinstance(w, numbers.Integral):
        v = decimal.Decimal(int(w))
    elif isinstance(w, decimal.Decimal):
        v = w
    else:
        f = float(w)  # a float, numpy float, Fraction, ...
        if not math.isfinite(f):
            raise ValueError("files: %r: weight %r: must be a finite number > 0" % (path, w))
        # repr gives the shortest decimal that reads back as the float (0.7, not 0.6999...).
        v = decimal.Decimal(repr(f))
    if not v.is_finite():
        raise ValueError("files: %r: weight %r: must be a finite number > 0" % (path, w))
    if not v > 0:
        raise ValueError("files: %r: weight %r: must be > 0" % (path, w))
    text = format(v, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def corpus_files(files: Files) -> Tuple[List[str], List[str]]:
    """The request's files and weights: one corpus (a path or a list of one
    path) has no weights; a mixture ({path: weight}, or (path, weight)
    pairs, in the order of read's --mix) has one per file."""
    if isinstance(files, str):
        return [files], []
    pairs = list(files.items()) if isinstance(files, Mapping) else None
    if pairs is None:
        items = list(files)
        if all(isinstance(f, str) for f in items):
            return items, []
        if not all(isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str) for f in items):
            raise TypeError("files %r: want a path, {path: weight} or [(path, weight), ...]" % (files,))
        pairs = items
    if not pairs:
        raise ValueError("files: an empty mixture")
    return [p for p, _ in pairs], [_weight(p, w) for p, w in pairs]


def sequence_request(files: Files, streams: Iterable[str], mb: Union[str, int] = "256",
                     randomize: str = "window", seed: int = 0, epochs: int = 1, workers: int = 1, rank: int = 0,
                     state: Optional[State] = None, max_minibatches: Optional[int] = None,
                     window_chunks: Optional[int] = None, window_samples: Optional[int] = None,
                     chunk_bytes: Optional[int] = None, chunk_sequences: Optional[int] = None,
                     epoch_size: Union[str, int] = "full", cut_at_sweep: bool = False, start: Optional[int] = None,
                     defines_mb_size: Optional[str] = None, label: Optional[str] = None, max_errors: int = 0,
                     k: int = 0, group_bytes: Optional[int] = None, split: str = "balanced") -> pb.SequenceRequest:
    """The SequenceRequest for read()'s keywords (docs/serve.md). None keeps
    the server's default; integers outside what the server accepts raise
    ValueError naming the keyword."""
    paths, weights = corpus_files(files)
    if isinstance(streams, str):
        raise TypeError("streams %r: want a list of NAME:DIM[:sparse]" % (streams,))
    workers = check_int("workers", workers, 1, INT32_MAX)
    if split not in ("balanced", "chunks"):
        raise ValueError("split %r: want balanced or chunks" % (split,))
    r = pb.SequenceRequest(
        files=paths, weights=weights, streams=list(streams), mb=str(mb), randomize=randomize,
        seed=check_int("seed", seed, 0, UINT64_MAX), epochs=check_int("epochs", epochs, 1, INT32_MAX),
        workers=workers, rank=check_int("rank", rank, 0, workers - 1), epoch_size=str(epoch_size),
        cut_at_sweep=bool(cut_at_sweep), max_errors=check_int("max_errors", max_errors, 0, INT32_MAX),
        k=check_int("k", k, 0, INT32_MAX), split=split, elide_unit_sparse=True, packed=True, columns=True)
    optional = (("max_minibatches", max_minibatches, INT64_MAX), ("window_chunks", window_chunks, INT32_MAX),
                ("window_samples", window_samples, UINT64_MAX), ("chunk_bytes", chunk_bytes, INT64_MAX),
                ("chunk_sequences", chunk_sequences, INT32_MAX), ("group_bytes", group_bytes, GROUP_BYTES_MAX))
    for name, v, hi in optional:
        if v is not None:
            if name == "max_minibatches" and v == 0:
                raise ValueError("max_minibatches 0: use None for no limit")
            setattr(r, name, check_int(name, v, 1, hi))
    if start is not None:
        r.start = check_int("start", start, 0, UINT64_MAX)
    if defines_mb_size:
        r.defines_mb_size = defines_mb_size
    if label:
        r.label = label
    if state is not None:
        r.state = state_bytes(state)
    return r
