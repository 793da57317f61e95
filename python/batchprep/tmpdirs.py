"""The private server's socket directories (batchprep-* in the temporary
directory): each names the process that made it, so that one left behind by
a process that died without cleaning up (kill -9, a crash, os._exit) is
removed by the next process that starts a private server.

A directory is removed only when all of these hold: its name starts with
batchprep-, it is a real directory (not a link) of this user, it holds the
owner file this module writes, the process named there belongs to this
process's pid namespace, and it is gone (no such process, or a process with
that id that started at another time, i.e. the id was reused). Anything
else, a live owner's directory above all, is left as it is.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from typing import Optional, Tuple

PREFIX = "batchprep-"
OWNER = "owner.pid"  # "PID STARTTIME PIDNS\n" of the process that made the directory

_swept = False
_swept_lock = threading.Lock()


def _start_time(pid: int) -> Optional[str]:
    """The start time of process pid (Linux: /proc/PID/stat field 22, in
    clock ticks since boot); None when it cannot be read."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()  # after "pid (comm) "
    return fields[19].decode() if len(fields) > 19 else None


def _pid_namespace() -> str:
    """This process's pid namespace (Linux), "?" when unknown: a process id
    means something only within its namespace."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "?"


def _alive(pid: int, started: str, ns: str) -> bool:
    """Whether the process that wrote an owner file may still run. One of
    another pid namespace (another container sharing this directory, say)
    cannot be looked up from here: it counts as alive."""
    if ns != _pid_namespace():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # another user's process holds the id (EPERM): its start time tells
    now = _start_time(pid)
    return now is None or started == "?" or now == started


def make() -> str:
    """A new private directory (mode 0700) marked with this process as its
    owner; the first call in a process removes stale ones first. A socket
    path holds at most 107 bytes on Linux: when the temporary directory's
    path is too long for one, the directory is made in /tmp."""
    sweep()
    d = tempfile.mkdtemp(prefix=PREFIX)
    if len(os.path.join(d, "serve.sock")) > 100:
        os.rmdir(d)
        d = tempfile.mkdtemp(prefix=PREFIX, dir="/tmp")
    try:
        tmp = os.path.join(d, OWNER + ".new")
        with open(tmp, "w") as f:
            f.write("%d %s %s\n" % (os.getpid(), _start_time(os.getpid()) or "?", _pid_namespace()))
        os.rename(tmp, os.path.join(d, OWNER))
    except BaseException:
        remove(d)
        raise
    return d


def remove(d: str) -> None:
    """Remove a directory made by make(): its known entries by name first,
    which takes no file descriptor (so it works when the process has run
    out of them, where a tree walk cannot open the directory), then
    anything else."""
    for name in ("serve.sock", OWNER, OWNER + ".new"):
        try:
            os.unlink(os.path.join(d, name))
        except OSError:
            pass
    try:
        os.rmdir(d)
    except FileNotFoundError:
        pass
    except OSError:
        shutil.rmtree(d, ignore_errors=True)


def _owner(d: str) -> Optional[Tuple[int, str, str]]:
    try:
        with open(os.path.join(d, OWNER)) as f:
            pid, started, ns = f.read(256).split()
        return int(pid), started, ns
    except (OSError, ValueError):
        return None


def sweep() -> None:
    """Remove the stale directories of this user (once per process)."""
    global _swept
    with _swept_lock:
        if _swept:
            return
        _swept = True
    try:
        parents = {tempfile.gettempdir(), "/tmp"}
    except OSError:  # no usable temporary directory now (out of descriptors): try on the next start
        with _swept_lock:
            _swept = False
        return
    for parent in parents:
        try:
            names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
        except OSError:
            continue
        for n in names:
            d = os.path.join(parent, n)
            try:
                st = os.lstat(d)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue
            owner = _owner(d)
            if owner is not None and not _alive(*owner):
                remove(d)
