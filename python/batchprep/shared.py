"""The reader's side of a call's shared memory with its private server
(SequenceRequest.shared_memory; SharedArrays in batchprep.proto)."""

from __future__ import annotations

import mmap
import os
import platform
import sys
from typing import Any, Optional

import numpy as np

_HEADER = 4096  # the ring's bytes before its data; the release position at 0


def usable() -> bool:
    """Whether to ask the private server for shared memory: on Linux x86-64,
    whose memory order keeps the copy of a message's arrays before the
    store that releases them, unless BATCHPREP_SHARED_MEMORY=0."""
    return (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
            and os.environ.get("BATCHPREP_SHARED_MEMORY", "1") != "0")


class Ring:
    """A call's ring, mapped on its first message: take() copies a
    message's arrays out and releases them to the server."""

    def __init__(self) -> None:
        self._mm: Optional[mmap.mmap] = None
        self._data: Any = None  # uint8 view of the data
        self._released: Any = None  # uint64 view of the header's release position
        self._size = 0

    def take(self, shared: Any) -> np.ndarray:
        """The arrays a SharedArrays names: a read-only copy that owns its
        memory (aligned, as numpy allocates), after which they are released."""
        if shared.path:
            self.close()
            try:
                fd = os.open(shared.path, os.O_RDWR)
            except OSError as e:
                raise OSError(e.errno, "batchprep: cannot open the server's shared memory %s (%s); "
                              "BATCHPREP_SHARED_MEMORY=0 sends the arrays through the socket instead" % (
                                  shared.path, e.strerror)) from None
            try:
                self._mm = mmap.mmap(fd, _HEADER + shared.size)
            finally:
                os.close(fd)
            self._data = np.frombuffer(self._mm, dtype=np.uint8, offset=_HEADER)
            self._released = np.frombuffer(self._mm, dtype="<u8", count=1)
            self._size = shared.size
        if self._mm is None:
            raise ValueError("batchprep: a message's arrays are in shared memory, but no ring was named")
        off, n = shared.position % self._size, shared.length
        if shared.size != self._size or off + n > self._size:
            raise ValueError("batchprep: shared arrays at %d+%d do not lie in the %d-byte ring" % (off, n, self._size))
        arrays = self._data[off:off + n].copy()
        arrays.flags.writeable = False
        self._released[0] = shared.position + n
        return arrays

    def close(self) -> None:
        """Unmap the ring (the copies taken stay)."""
        self._data = self._released = None
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a view still held somewhere: the collector unmaps it
                pass
            self._mm = None
