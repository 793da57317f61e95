"""Starting a local `batchprep serve` and connecting to a server."""

import atexit
import os
import shutil
import subprocess
import threading

import grpc
import grpc.experimental

from . import batchprep_pb2 as pb
from . import shared, tmpdirs

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


def settle(call):
    """Finish a cancelled call on the calling thread. grpcio's
    single-threaded stream calls (the SingleThreadedUnaryStream option,
    which a private server's connection uses) have a completion queue of
    their own that only the caller polls: after cancel() nobody takes the
    events of the operations still due, so the call, and with it the
    channel's socket, would stay open for the life of the process: one
    file descriptor per stream stopped early. Cancelling completes those
    operations at once, so this takes at most one event per operation.
    Calls served by the channel's own thread (other channels) have no
    such queue and are left alone."""
    state = getattr(call, "_state", None)
    consume = getattr(call, "_consume_next_event", None)
    if state is None or consume is None:
        return
    for _ in range(8):
        with state.condition:
            if not state.due:
                return
        try:
            consume()
        except Exception:  # the call is over either way; nothing to report
            return


class LocalServer:
    """A private `batchprep serve` child process for this process's user.

    It listens on a Unix socket inside a fresh directory only this user may
    enter (mode 0700), so no other local user can connect to it; it serves
    the user's own paths as given: relative ones in the current directory
    (its first ``--data-dir``), absolute ones anywhere (``--data-dir /``). It
    stops when its stdin closes: on close(), and when this process dies, even
    by SIGKILL. It has no stall timeout: its one client may pause between
    minibatches as long as it likes (an evaluation, a checkpoint). It reads
    objects (s3://BUCKET/KEY) in every bucket the user's AWS credentials
    reach (``--allow-bucket '*'``), caching them in cache_dir (None: the
    server's default, under the user's cache directory). It keeps a CTF
    file's index there too (``--cache-index``): the private server of a
    later process (the next epoch's DataLoader worker, say) opens an
    unchanged file without an index pass.
    """

    def __init__(self, binary=None, cache_dir=None):
        binary = binary or _binary()
        self._proc = None
        self._dir = tmpdirs.make()
        try:
            sock = os.path.join(self._dir, "serve.sock")
            self.args = [binary, "serve", "--listen", "unix:" + sock, "--metrics-listen", "off",
                         "--stall-timeout", "off", "--data-dir", os.getcwd(), "--data-dir", "/",
                         "--allow-bucket", "*", "--stop-on-stdin-eof", "--cache-index"]
            if cache_dir is not None:
                self.args += ["--cache-dir", os.path.abspath(os.fspath(cache_dir))]
            # Its own session: a Ctrl-C in the terminal reaches this process,
            # which then closes the server, not the server directly.
            self._proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          start_new_session=True)
            line = self._proc.stdout.readline().decode().split()
            if len(line) != 2 or line[0] != "listening":
                raise RuntimeError("batchprep serve did not start (first line %r)" % (line,))
        except BaseException:
            self.close()
            raise
        self.address = line[1]
        with _live_lock:
            _live.add(self)

    def alive(self):
        """Whether the server is still running."""
        return self._proc is not None and self._proc.poll() is None

    def close(self):
        """Stop the server: close its stdin and wait for it (quietly), then
        remove its socket directory."""
        p = self._proc
        if p is not None:
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
        tmpdirs.remove(self._dir)
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


def check_cache_dir(address, cache_dir):
    """cache_dir= is the private server's: refuse it with an address."""
    if address is not None and cache_dir is not None:
        raise ValueError("batchprep: cache_dir= is for the private server the client starts (no address=); "
                         "the server at %s caches objects in its own cache (its --cache-dir)" % address)


class Connection:
    """A channel to a server (a LocalServer, caching objects in cache_dir,
    when address is None)."""

    def __init__(self, address=None, token=None, root_certificates=None, cache_dir=None):
        check_cache_dir(address, cache_dir)
        self.server = None
        self.channel = None
        if address is None:
            self.server = LocalServer(cache_dir=cache_dir)
            address = self.server.address
        try:
            self._connect(address, token, root_certificates)
        except BaseException:
            self.close()
            raise

    def _connect(self, address, token, root_certificates):
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
        if self.channel is not None:
            self.channel.close()
        if self.server is not None:
            self.server.close()
            self.server = None
