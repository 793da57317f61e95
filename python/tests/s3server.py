"""A real MinIO for the tests: the binary Go's tests build once per machine
(internal/miniotest), started on a free loopback port with a temporary
directory and random credentials; objects are put with SigV4-signed
requests from the standard library."""

import datetime
import glob
import hashlib
import hmac
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

REGION = "us-east-1"


def minio_binary():
    """BATCHPREP_MINIO, else the newest ~/.cache/batchprep/minio/*/minio
    (os.UserCacheDir's place), else None."""
    b = os.environ.get("BATCHPREP_MINIO")
    if b:
        if not os.access(b, os.X_OK):
            raise FileNotFoundError("BATCHPREP_MINIO=%s is not an executable file" % b)
        return b
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    found = sorted(p for p in glob.glob(os.path.join(cache, "batchprep", "minio", "*", "minio")) if os.access(p, os.X_OK))
    return found[-1] if found else None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MinIO:
    """A running MinIO; stop() ends it and removes its directory."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="batchprep-minio-")
        self.access_key, self.secret_key = "test" + secrets.token_hex(8), secrets.token_hex(20)
        self.addr = "127.0.0.1:%d" % _free_port()
        env = dict(os.environ, MINIO_ROOT_USER=self.access_key, MINIO_ROOT_PASSWORD=self.secret_key,
                   MINIO_BROWSER="off", MINIO_UPDATE="off", MINIO_CI_CD="1")
        self._log = open(os.path.join(self.dir, "log"), "wb")
        self._proc = subprocess.Popen(
            [binary, "server", "--quiet", "--address", self.addr, "--console-address", "127.0.0.1:0",
             "--certs-dir", os.path.join(self.dir, "certs"), os.path.join(self.dir, "data")],
            env=env, stdout=self._log, stderr=self._log, stdin=subprocess.DEVNULL)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError("minio exited: %s" % open(os.path.join(self.dir, "log")).read()[-2000:])
            try:
                with urllib.request.urlopen("http://%s/minio/health/ready" % self.addr, timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise RuntimeError("minio at %s not ready after 60 s" % self.addr)

    def env(self):
        """The AWS_* variables that point a client at this server, with no
        profile, no shared files and no EC2 metadata probe."""
        absent = os.path.join(self.dir, "absent")
        return {"AWS_ENDPOINT_URL": "http://" + self.addr, "AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key, "AWS_SESSION_TOKEN": "", "AWS_REGION": REGION,
                "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": absent + "-config",
                "AWS_SHARED_CREDENTIALS_FILE": absent + "-credentials", "AWS_EC2_METADATA_DISABLED": "true"}

    def _put(self, path, body):
        """PUT body at path, retrying 503 (a server that answers ready may
        still be starting its subsystems, notably on a loaded machine) for
        up to a minute, as the Go tests' SDK client retries."""
        deadline, wait = time.time() + 60, 0.05
        while True:
            try:
                return self._put_once(path, body)
            except urllib.error.HTTPError as e:
                if e.code != 503 or time.time() + wait > deadline:
                    raise
            time.sleep(wait)
            wait = min(2 * wait, 2.0)

    def _put_once(self, path, body):
        now = datetime.datetime.now(datetime.timezone.utc)
        amz, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        digest = hashlib.sha256(body).hexdigest()
        signed = "host;x-amz-content-sha256;x-amz-date"
        canonical = "\n".join(["PUT", path, "", "host:%s\nx-amz-content-sha256:%s\nx-amz-date:%s\n" % (self.addr, digest, amz),
                               signed, digest])
        scope = "%s/%s/s3/aws4_request" % (day, REGION)
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = ("AWS4" + self.secret_key).encode()
        for part in (day, REGION, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        req = urllib.request.Request("http://%s%s" % (self.addr, path), data=body, method="PUT", headers={
            "x-amz-date": amz, "x-amz-content-sha256": digest,
            "Authorization": "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
                self.access_key, scope, signed, sig)})
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()

    def make_bucket(self, bucket):
        self._put("/" + bucket, b"")

    def put_file(self, bucket, key, path):
        """Store the file at path as bucket/key (key: letters, digits, . - _ /)."""
        with open(path, "rb") as f:
            self._put("/%s/%s" % (bucket, key), f.read())

    def stop(self):
        p = self._proc
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
