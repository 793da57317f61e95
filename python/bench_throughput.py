"""Throughput of the Python client against `batchprep read --format summary`
on the same file and flags, in one run, interleaved (issue 23, section 3).

    /usr/bin/python3 python/bench_throughput.py                  # ATIS x100 and x300, 5 rounds each
    /usr/bin/python3 python/bench_throughput.py --copies 100 --rounds 9 --dir /tmp/bench   # keeps the file

Data: ATIS train (../shared/data/ctf/atis/atis.train.ctf) concatenated
--copies times (each setup of a comma-separated list); streams S0:943:sparse
S1:26:sparse S2:129:sparse, --mb 256, read's defaults otherwise. The page
cache is warmed first, and the server indexes the file before the timed
rounds (a drain that is not counted). Each round runs `batchprep read
--format summary` (wall clock and CPU of the child from wait4), then drains
the same minibatches through batchprep.read into numpy, making every array
(wall clock; the client's CPU from time.process_time, all its threads; the
server's CPU from /proc/PID/stat). Prints a line per round, then one line
per setup with the medians: wall and CPU seconds of read, the client and the
server, the wall ratio client / read (the target: at most 1.25) and the CPU
ratio (client + server) / read. Measure on a quiet machine: on a loaded one
the wall-clock ratio means little (the CPU ratio moves less). The binary is
BATCHPREP_BIN, else built with go build.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import batchprep  # noqa: E402

STREAMS = ["S0:943:sparse", "S1:26:sparse", "S2:129:sparse"]
TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """User + system CPU seconds of process pid so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def run_read(binary, path, mb):
    args = [binary, "read", path, "--mb", mb, "--quiet", "--format", "summary"]
    for s in STREAMS:
        args += ["--stream", s]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit("batchprep read failed: %s" % out)
    samples = [int(l.split()[1]) for l in out.splitlines() if l.startswith("samples:")]
    return wall, ru.ru_utime + ru.ru_stime, samples[0] if samples else 0


def drain(path, mb, address):
    """Every minibatch into numpy, every array made (as a trainer's first
    access makes it); (samples, minibatches)."""
    samples = n = touched = 0
    with batchprep.read([path], streams=STREAMS, mb=mb, address=address) as it:
        for m in it:
            samples += m.end - m.start
            n += 1
            touched += len(m.sequences)
            for name in m.keys():
                v = m[name]
                touched += len(v[1]) if isinstance(v, tuple) else v.shape[0]
                touched += len(m.lengths[name])
    return samples, n


def make_file(d, atis, copies):
    path = os.path.join(d, "atis-x%d.ctf" % copies)
    if not os.path.exists(path):
        with open(atis, "rb") as f:
            data = f.read()
        with open(path + ".tmp", "wb") as f:
            for _ in range(copies):
                f.write(data)
        os.replace(path + ".tmp", path)
    with open(path, "rb") as f:  # page cache warm
        while f.read(1 << 24):
            pass
    return path


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def setup(binary, path, copies, a):
    """The rounds of one file; returns its summary line."""
    print("ATIS x%d: %s, %d bytes; %d cores; load average %s" % (
        copies, path, os.path.getsize(path), os.cpu_count(), loadavg()), flush=True)
    server = batchprep.LocalServer(binary)
    rows = []
    try:
        pid = server._proc.pid
        drain(path, a.mb, server.address)  # the server indexes the file: not counted
        for r in range(a.rounds):
            load = loadavg()
            rw, rc, rs = run_read(binary, path, a.mb)
            s0, c0, t0 = proc_cpu(pid), time.process_time(), time.perf_counter()
            samples, n = drain(path, a.mb, server.address)
            cw, cc, sc = time.perf_counter() - t0, time.process_time() - c0, proc_cpu(pid) - s0
            if samples != rs:
                raise SystemExit("the client drained %d samples, read %d" % (samples, rs))
            rows.append((rw, rc, cw, cc, sc, cw / rw, (cc + sc) / rc))
            print("  round %d (load %s): read %.3f s wall, %.3f s cpu; client %.3f s wall, client cpu %.3f s, "
                  "server cpu %.3f s; %d minibatches, %d samples; wall ratio %.3f, cpu ratio %.3f" % (
                      (r, load) + rows[-1][:5] + (n, samples) + rows[-1][5:]), flush=True)
    finally:
        server.close()
    med = [statistics.median(col) for col in zip(*rows)]
    return ("ATIS x%d (medians of %d rounds): read %.3f s wall, %.3f s cpu | client %.3f s wall, client cpu %.3f s, "
            "server cpu %.3f s | wall ratio %.3f (target <= 1.25), cpu ratio (client+server)/read %.3f" % (
                (copies, len(rows)) + tuple(med)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", default="100,300", help="ATIS train concatenated this many times; a comma-separated list")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", default="256")
    ap.add_argument("--dir", default=None, help="where the files are made (kept); default a temp dir, removed")
    ap.add_argument("--atis", default=os.path.join(REPO, "..", "shared", "data", "ctf", "atis", "atis.train.ctf"))
    a = ap.parse_args()
    warnings.simplefilter("ignore", batchprep.BatchprepWarning)
    d = a.dir or tempfile.mkdtemp(prefix="batchprep-bench-")
    os.makedirs(d, exist_ok=True)
    try:
        binary = os.environ.get("BATCHPREP_BIN")
        if not binary:
            binary = os.path.join(d, "batchprep")
            subprocess.run(["go", "build", "-o", binary, "./cmd/batchprep"], cwd=REPO, check=True)
            os.environ["BATCHPREP_BIN"] = binary
        lines = []
        for copies in [int(c) for c in a.copies.split(",")]:
            lines.append(setup(binary, make_file(d, a.atis, copies), copies, a))
            if not a.dir:
                os.remove(os.path.join(d, "atis-x%d.ctf" % copies))
        print("\n".join(lines))
    finally:
        if not a.dir:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
