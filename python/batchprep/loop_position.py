"""How a persistent DataLoader worker learns where the training loop stands.

With ``persistent_workers=True`` a DataLoader keeps its workers, and their
copies of the dataset, from one epoch to the next. The worker that reads the
stream knows only what it produced, which runs ahead of the loop (items
prefetched, held back in the loader's reorder buffer, or dropped when the
loop left early), and it never sees a load_state_dict() in the training
process. So at the start of each later iteration it asks the training
process: the dataset there answers from a small thread, over a Unix socket
in Linux's abstract namespace (no file to clean up), and only to processes of
the same user (the peer's credentials are checked on both ends).

The question comes after the loader has finished its previous iteration
(the worker starts only when the loader sends it work, after its reset), so
the training process's position is settled when it is read.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import struct
import sys
import threading
import weakref
from typing import Any, Dict, Optional

_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
_ANSWER_LIMIT = 1 << 20


def available() -> bool:
    """Whether the training process can answer (Linux abstract sockets)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_PEERCRED")


def _address(token: str, pid: int) -> str:
    return "\0batchprep-position-%s-%d" % (token, pid)


def _peer_uid(conn: socket.socket) -> int:
    return _CRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size))[1]


class PositionService:
    """The training process's side: answers a worker's question with the
    dataset's position. Its thread ends within a second of the dataset
    being collected."""

    def __init__(self, dataset: Any) -> None:
        self._dataset = weakref.ref(dataset)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.bind(_address(dataset._token, os.getpid()))
            self._sock.listen(8)
        except OSError:
            self._sock.close()
            raise
        self._sock.settimeout(1.0)
        threading.Thread(target=self._run, name="batchprep-loop-position", daemon=True).start()

    def _run(self) -> None:
        try:
            while True:
                try:
                    conn, _ = self._sock.accept()
                except socket.timeout:
                    if self._dataset() is None:
                        return
                    continue
                except OSError:
                    return
                with conn:
                    try:
                        conn.settimeout(10)
                        if _peer_uid(conn) == os.getuid():
                            conn.sendall(json.dumps(self._answer()).encode())
                    except OSError:
                        pass  # the worker went away; it reports its own failure
        finally:
            self._sock.close()

    def _answer(self) -> Dict[str, Any]:
        ds = self._dataset()
        if ds is None:
            return {"error": "the dataset in the training process is gone"}
        try:
            return ds._loop_position()
        except Exception as e:  # e.g. a torch whose loader is not recognized: say why to the worker
            return {"error": str(e)}


def loop_pid() -> int:
    """The process that started this DataLoader worker, which the worker
    hands its items to: multiprocessing's parent (the training process,
    also with the forkserver context, where the OS parent is the fork
    server)."""
    parent = multiprocessing.parent_process()
    return parent.pid if parent is not None and parent.pid else os.getppid()


def ask(token: str, timeout: float = 60) -> Optional[Dict[str, Any]]:
    """The worker's side: the training process's position as
    {"state": JSON text or None, "start": int or None}; None when the
    training process has no service (no item of this dataset ever reached
    it, so what the worker holds is still the position)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        try:
            s.connect(_address(token, loop_pid()))
        except (ConnectionRefusedError, FileNotFoundError):
            return None
        if _peer_uid(s) != os.getuid():
            raise RuntimeError("SequenceDataset: the process answering for the training loop's position belongs to "
                               "another user")
        data = b""
        while len(data) <= _ANSWER_LIMIT:
            part = s.recv(65536)
            if not part:
                break
            data += part
    if not data:
        raise RuntimeError("SequenceDataset: the training process did not say where its loop stands")
    answer = json.loads(data)
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return answer
