"""Starting a local `batchprep serve` and connecting to a server."""

import atexit
import os
import shutil
import subprocess
import tempfile
import threading

import grpc
import grpc.experimental

from . import batchprep_pb2 as pb
from . import shared

_SERVICE = "/batchprep.v1.Batches/"
_live = set()
_live_lock = threading.Lock()


def _binary():
    """The batchprep binary: BATCHPREP_BIN, else batchprep on PATH."""
    b = os.environ.get("BATCHPREP_BIN")
    if b:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            raise FileNotFoundError("batchprep: BATCHPREP_BIN=%s is not an executable file" % b)
        return b
    b = shutil.which("batchprep")
    if not b:
        raise FileNotFoundError(
            "batchprep: no batchprep binary to start a local server: put it on PATH (in the batchprep "
            "repository, `go install ./cmd/batchprep` installs it into $(go env GOPATH)/bin) or set "
            "BATCHPREP_BIN to its path; or pass address= to use a running `batchprep serve`")
    return b


class LocalServer:
    """A private `batchprep serve` child process for this process's user.

    It listens on a Unix socket inside a fresh directory only this user may
    enter (mode 0700), so no other local user can connect to it; it serves
    the user's own paths as given: relative ones in the current directory
    (its first ``--data-dir``), absolute ones anywhere (``--data-dir /``). It
    stops when its stdin closes: on close(), and when this process dies, even
    by SIGKILL.
    """

    def __init__(self, binary=None):
        self._dir = tempfile.mkdtemp(prefix="batchprep-")
        sock = os.path.join(self._dir, "serve.sock")
        if len(sock) > 100:  # a socket path holds at most 107 bytes on Linux
            os.rmdir(self._dir)
            self._dir = tempfile.mkdtemp(prefix="batchprep-", dir="/tmp")
            sock = os.path.join(self._dir, "serve.sock")
        # Its own session: a Ctrl-C in the terminal reaches this process,
        # which then closes the server, not the server directly.
        self._proc = subprocess.Popen(
            [binary or _binary(), "serve", "--listen", "unix:" + sock, "--metrics-listen", "off",
             "--data-dir", os.getcwd(), "--data-dir", "/", "--stop-on-stdin-eof"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        line = self._proc.stdout.readline().decode().split()
        if len(line) != 2 or line[0] != "listening":
            self.close()
            raise RuntimeError("batchprep serve did not start (first line %r)" % (line,))
        self.address = line[1]
        with _live_lock:
            _live.add(self)

    def close(self):
        """Stop the server: close its stdin and wait for it (quietly), then
        remove its socket directory."""
        p = self._proc
        if p.stdin:
            try:
                p.stdin.close()
            except OSError:
                pass
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout:
            p.stdout.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        with _live_lock:
            _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@atexit.register
def _stop_all():
    with _live_lock:
        live = list(_live)
    for s in live:
        s.close()


class Connection:
    """A channel to a server (a LocalServer when address is None)."""

    def __init__(self, address=None, token=None, root_certificates=None):
        self.server = None
        if address is None:
            self.server = LocalServer()
            address = self.server.address
        opts = [("grpc.max_receive_message_length", -1)]
        if self.server is not None and shared.usable():
            # With shared memory the messages are small: the stream is read
            # on the calling thread (grpcio's single-threaded unary-stream
            # calls), without a hand-off to the channel's polling thread per
            # message (~10 % of the client's CPU on ATIS). With the arrays in
            # the messages that thread is kept: it receives the next message
            # while the caller works on the last one.
            opts.append((grpc.experimental.ChannelOptions.SingleThreadedUnaryStream, 1))
        if root_certificates is not None:
            self.channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates), options=opts)
        else:
            self.channel = grpc.insecure_channel(address, options=opts)
        token = token if token is not None else os.environ.get("BATCHPREP_TOKEN")
        self.metadata = (("authorization", "Bearer " + token),) if token else None
        # The stub: grpcio's generic unary_stream over the generated messages
        # (no grpc_tools needed).
        self.sequences = self.channel.unary_stream(
            _SERVICE + "Sequences", request_serializer=pb.SequenceRequest.SerializeToString,
            response_deserializer=pb.SequenceMinibatch.FromString)
        self.sequence_groups = self.channel.unary_stream(
            _SERVICE + "SequenceGroups", request_serializer=pb.SequenceRequest.SerializeToString,
            response_deserializer=pb.SequenceGroup.FromString)
        self.graph = self.channel.unary_stream(
            _SERVICE + "Graph", request_serializer=pb.GraphRequest.SerializeToString,
            response_deserializer=pb.GraphRecord.FromString)

    def close(self):
        self.channel.close()
        if self.server is not None:
            self.server.close()
            self.server = None
