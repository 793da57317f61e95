"""Samples per second delivered into numpy arrays by the Python client in
one process over loopback, and the time to the first minibatch at a far
position. Used by bench/serve.sh.

    /usr/bin/python3 bench/client_throughput.py FILE --stream S0:943:sparse ... [--address A] [--mb 256]
    /usr/bin/python3 bench/client_throughput.py FILE --stream ... --first-at-sweep 1000000000 --address A
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import batchprep  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--stream", action="append", required=True)
    ap.add_argument("--mb", default="256")
    ap.add_argument("--address", default=None)
    ap.add_argument("--first-at-sweep", type=int, default=0)
    ap.add_argument("--sweep-samples", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunk-bytes", type=int, default=None)
    ap.add_argument("--pause", type=float, default=5,
                    help="seconds to wait before each --first-at-sweep measurement (an idle server); 0 measures "
                    "calls back to back, each starting while the previous call's source closes")
    a = ap.parse_args()
    if a.first_at_sweep:
        times = []
        for _ in range(a.repeat):
            time.sleep(a.pause)  # an idle server
            t0 = time.perf_counter()
            with batchprep.read([a.file], streams=a.stream, mb=a.mb, start=a.first_at_sweep * a.sweep_samples,
                                epoch_size="inf", address=a.address, chunk_bytes=a.chunk_bytes) as it:
                mb = next(it)
                times.append(time.perf_counter() - t0)
        print("first minibatch at sweep %d (start %d): %s ms (median %.1f ms, max %.1f ms)" % (
            mb.sweep, mb.start, " ".join("%.1f" % (1000 * t) for t in times), 1000 * sorted(times)[len(times) // 2],
            1000 * max(times)))
        return
    t0, c0, samples, n, touched = time.perf_counter(), time.process_time(), 0, 0, 0
    with batchprep.read([a.file], streams=a.stream, mb=a.mb, address=a.address, chunk_bytes=a.chunk_bytes) as it:
        for mb in it:
            samples += mb.end - mb.start
            n += 1
            for name in mb.keys():  # the arrays exist: touch each one
                v = mb[name]
                touched += len(v[1]) if isinstance(v, tuple) else v.shape[0]
    el, cpu = time.perf_counter() - t0, time.process_time() - c0
    print("minibatches: %d\nsamples: %d\nseconds: %.3f\nclient cpu seconds: %.3f\nsamples/s: %.0f" % (
        n, samples, el, cpu, samples / el))


if __name__ == "__main__":
    main()
