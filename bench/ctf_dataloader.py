"""The baseline a PyTorch user would write without batchprep: a plain,
reasonable Python CTF parser in an IterableDataset, run by a DataLoader with
2 workers. Fair, not sabotaged: each worker parses its own byte range of the
file (no duplicated work), groups lines into sequences by id, turns the
requested sparse streams into index/value arrays with numpy, and packs whole
sequences into minibatches of up to --mb samples (as batchprep does). A
sequence belongs to the worker whose range holds its first line, so no
sequence is read twice or lost at a boundary. Minibatches travel from the
workers as numpy arrays (pickled through the DataLoader's queue) and become
tensors with torch.from_numpy in the main process: on this machine that is
~8x faster than DataLoader's default of converting in the worker and passing
a dozen small tensors per minibatch through shared memory (--transfer
tensor measures that). It does not randomize across the corpus (a window
randomizer would only add work), so it is an upper bound for this approach.

    /usr/bin/python3 bench/ctf_dataloader.py FILE --stream S0 --stream S2 --mb 256 --workers 2
prints samples/s.
"""

import argparse
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset


def parse_line(line, wanted):
    """-> (id or None, {stream: (indices, values)}) for one CTF line."""
    sid = None
    parts = line.split("|")
    head = parts[0].strip()
    if head:
        sid = head
    out = {}
    for p in parts[1:]:
        if not p or p[0] == "#":
            continue
        name, _, rest = p.partition(" ")
        if name not in wanted:
            continue
        idx, val = [], []
        for tok in rest.split():
            i, _, v = tok.partition(":")
            idx.append(int(i))
            val.append(float(v))
        out[name] = (idx, val)
    return sid, out


class CTFDataset(IterableDataset):
    def __init__(self, path, streams, mb):
        self.path, self.streams, self.mb = path, set(streams), mb

    def _range(self):
        size = os.path.getsize(self.path)
        info = torch.utils.data.get_worker_info()
        n, w = (1, 0) if info is None else (info.num_workers, info.id)
        return size * w // n, size * (w + 1) // n

    def _id_before(self, f, begin):
        """The id of the last line with an id that starts before begin."""
        n = 4096
        while True:
            lo = max(0, begin - n)
            f.seek(lo)
            block = f.read(begin - lo)
            if block and not block.endswith(b"\n"):
                block += f.readline()  # the line holding byte begin-1, whole
            lines = block.rstrip(b"\n").split(b"\n")
            if lo > 0:
                lines = lines[1:]  # may be cut
            for raw in reversed(lines):
                sid, _ = parse_line(raw.decode(), ())
                if sid is not None:
                    return sid
            if lo == 0:
                return None
            n *= 2

    def _sequences(self):
        begin, end = self._range()
        with open(self.path, "rb") as f:
            cur_id, cur = None, None
            if begin:
                # Lines before our first sequence start belong to the
                # previous worker's last sequence: skip them.
                cur_id = self._id_before(f, begin)
                f.seek(begin - 1)
                f.readline()  # finish the line that straddles the boundary
            while True:
                pos = f.tell()
                raw = f.readline()
                if not raw:
                    break
                sid, data = parse_line(raw.decode(), self.streams)
                if sid is None:
                    sid = cur_id
                if sid != cur_id:
                    if cur is not None:
                        yield cur
                    if pos >= end:
                        return
                    cur_id, cur = sid, {s: ([], [], []) for s in self.streams}
                if cur is None:
                    continue
                for s, (idx, val) in data.items():
                    cur[s][0].extend(idx)
                    cur[s][1].extend(val)
                    cur[s][2].append(len(idx))
            if cur is not None:
                yield cur

    def __iter__(self):
        batch, n = [], 0
        key = min(self.streams)
        for seq in self._sequences():
            k = len(seq[key][2])
            if batch and n + k > self.mb:
                yield self._collate(batch)
                batch, n = [], 0
            batch.append(seq)
            n += k
        if batch:
            yield self._collate(batch)

    def _collate(self, batch):
        out = {}
        for s in self.streams:
            counts = np.concatenate([np.asarray(q[s][2], dtype=np.int32) for q in batch])
            indptr = np.zeros(len(counts) + 1, dtype=np.int32)
            np.cumsum(counts, out=indptr[1:])
            out[s] = (indptr, np.concatenate([np.asarray(q[s][0], dtype=np.int32) for q in batch]),
                      np.concatenate([np.asarray(q[s][1], dtype=np.float32) for q in batch]),
                      np.asarray([len(q[s][2]) for q in batch], dtype=np.int32))
        return out


def _identity(mb):
    return mb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--stream", action="append", required=True)
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--transfer", choices=("numpy", "tensor"), default="numpy",
                    help="numpy: arrays through the queue, torch.from_numpy in the main process; "
                    "tensor: DataLoader's default conversion in the worker (shared-memory tensors)")
    ap.add_argument("--max-samples", type=int, default=0, help="stop after this many samples (0: the whole file)")
    a = ap.parse_args()
    ds = CTFDataset(a.file, a.stream, a.mb)
    kw = {"collate_fn": _identity} if a.transfer == "numpy" else {}
    loader = DataLoader(ds, batch_size=None, num_workers=a.workers, prefetch_factor=4 if a.workers else 2, **kw)
    key = min(a.stream)
    t0, samples = time.perf_counter(), 0
    for mb in loader:
        if a.transfer == "numpy":
            mb = {s: tuple(torch.from_numpy(x) for x in v) for s, v in mb.items()}
        samples += int(mb[key][3].sum())
        if a.max_samples and samples >= a.max_samples:
            break
    el = time.perf_counter() - t0
    print("samples: %d\nseconds: %.3f\nsamples/s: %.0f" % (samples, el, samples / el))


if __name__ == "__main__":
    main()
