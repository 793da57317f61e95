"""A server with a token and TLS, as off loopback, and its /metrics."""

import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.request

import grpc

import batchprep
from batchprep.client import BatchprepError

from .helpers import binary, read_jsonl, write_corpus
from .test_read import STREAMS, as_line, flags


@unittest.skipUnless(shutil.which("openssl"), "openssl absent (it makes the test certificate)")
class AccessTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.corpus = os.path.join(cls.dir, "c.ctf")
        write_corpus(cls.corpus, 30)
        cert, key, tok = (os.path.join(cls.dir, n) for n in ("cert.pem", "key.pem", "token"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=batchprep test",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        with open(tok, "w") as f:
            f.write("py-token\n")
        with open(cert, "rb") as f:
            cls.ca = f.read()
        cls.proc = subprocess.Popen([binary(), "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                                     "--token-file", tok, "--tls-cert", cert, "--tls-key", key, "--stop-on-stdin-eof",
                                     "--data-dir", cls.dir],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        cls.address = cls.proc.stdout.readline().decode().split()[1]
        cls.metrics = cls.proc.stdout.readline().decode().split()[1]

    @classmethod
    def tearDownClass(cls):
        cls.proc.stdin.close()
        cls.proc.wait(10)
        cls.proc.stdout.close()

    def test_tls_and_token(self):
        want = read_jsonl([self.corpus] + flags(STREAMS) + ["--mb", "9"])
        with batchprep.read([self.corpus], streams=STREAMS, mb="9", address=self.address, token="py-token",
                            root_certificates=self.ca) as it:
            got = [as_line(mb) for mb in it]
        self.assertEqual(got, want)
        os.environ["BATCHPREP_TOKEN"] = "py-token"
        try:
            with batchprep.read([self.corpus], streams=STREAMS, address=self.address, root_certificates=self.ca,
                                max_minibatches=1) as it:
                self.assertEqual(len(list(it)), 1)
        finally:
            del os.environ["BATCHPREP_TOKEN"]
        for kw in (dict(token="wrong"), dict(token="")):
            with self.assertRaises(BatchprepError) as cm:
                list(batchprep.read([self.corpus], streams=STREAMS, address=self.address, root_certificates=self.ca, **kw))
            self.assertEqual(cm.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        with self.assertRaises(BatchprepError) as cm:  # plaintext to a TLS server
            list(batchprep.read([self.corpus], streams=STREAMS, address=self.address, token="py-token"))
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)

    def test_metrics(self):
        n = sum(1 for _ in batchprep.read([self.corpus], streams=STREAMS, mb="4", address=self.address,
                                          token="py-token", root_certificates=self.ca))
        rq = urllib.request.Request(self.metrics, headers={"Authorization": "Bearer py-token"})
        body = urllib.request.urlopen(rq, timeout=10).read().decode()
        sent = [l for l in body.splitlines() if l.startswith('batchprep_serve_batches_sent_total{call="sequence_groups"}')]
        self.assertEqual(len(sent), 1, body)
        self.assertGreaterEqual(float(sent[0].split()[1]), n)
        for name in ("batchprep_serve_samples_sent_total", "batchprep_serve_bytes_sent_total",
                     "batchprep_serve_clients", "batchprep_serve_parse_wait_seconds_total"):
            self.assertIn(name, body)
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(self.metrics, timeout=10)
        self.assertEqual(cm.exception.code, 401)


if __name__ == "__main__":
    unittest.main()
