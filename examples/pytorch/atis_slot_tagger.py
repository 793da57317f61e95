"""A slot tagger on ATIS trained through batchprep serve, on several ranks.

From the repository root, with ../shared/data beside it:

    go build -o /tmp/batchprep ./cmd/batchprep
    BATCHPREP_BIN=/tmp/batchprep torchrun --redirects 1 --tee 1 --nproc_per_node 2 \
        examples/pytorch/atis_slot_tagger.py --data ../shared/data/ctf/atis --steps 400 --ckpt /tmp/atis-ckpt

(--redirects 1 --tee 1: Debian's torch 1.13 torchrun fails on Python 3.11
with its default --redirects 0. With batchprep on PATH, BATCHPREP_BIN is not
needed.)

Model: word embedding + bidirectional GRU + linear over the 129 slot labels.
Each rank reads its part of every global minibatch (SPEC A4) from its own
local `batchprep serve` (BATCHPREP_BIN or batchprep on PATH); gradients are
summed over ranks with gloo and divided by the global token count, so the
step is that of one process on the whole minibatch. Rank 0 checkpoints the
model, the optimizer and the data position (the dataset's state_dict: one
position serves every rank) every --ckpt-every steps; --resume continues
from the checkpoint with exactly the batches an uninterrupted run would have
had. --die-after N kills every rank after step N (to test that). --log
writes each rank's batches and losses as JSON lines. At the end, rank 0
prints the slot accuracy on atis.test.
"""

import argparse
import json
import os
import signal
import sys
import warnings

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import batchprep  # noqa: E402
from batchprep.torch import SequenceDataset, padded, sparse_ids  # noqa: E402

WORDS, SLOTS = 943, 129
# ATIS's S1 stream (the intent) is not used here; the reader says so once per chunk.
warnings.filterwarnings("ignore", message='.*stream "S1" is not configured', category=batchprep.BatchprepWarning)
STREAMS = ["S0:%d:sparse" % WORDS, "S2:%d:sparse" % SLOTS]


class Tagger(nn.Module):
    def __init__(self, emb=64, hidden=96):
        super().__init__()
        self.emb = nn.Embedding(WORDS + 1, emb, padding_idx=WORDS)
        self.gru = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, SLOTS)

    def forward(self, words, lengths):
        x = nn.utils.rnn.pack_padded_sequence(self.emb(words), lengths, batch_first=True, enforce_sorted=False)
        y, _ = self.gru(x)
        y, _ = nn.utils.rnn.pad_packed_sequence(y, batch_first=True, total_length=words.shape[1])
        return self.out(y)


def tensors(mb):
    """(words, labels, lengths) padded per sequence; labels -100 on padding."""
    w, lengths = padded(mb, sparse_ids(mb, "S0"), "S0", pad=WORDS)
    l, _ = padded(mb, sparse_ids(mb, "S2"), "S2", pad=-100)
    return torch.from_numpy(w), torch.from_numpy(l), torch.from_numpy(lengths)


def save_atomic(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def evaluate(model, test_file):
    model.eval()
    right = total = 0
    with torch.no_grad():
        for mb in batchprep.read([test_file], streams=STREAMS, mb="512", randomize="none"):
            words, labels, lengths = tensors(mb)
            pred = model(words, lengths).argmax(-1)
            mask = labels != -100
            right += int((pred[mask] == labels[mask]).sum())
            total += int(mask.sum())
    model.train()
    return right / max(total, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "ctf", "atis"))
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--mb", default="256")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--ckpt-every", type=int, default=50)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--die-after", type=int, default=0)
    ap.add_argument("--log", default="")
    ap.add_argument("--no-eval", action="store_true")
    a = ap.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(a.seed)  # same initial weights on every rank
    torch.set_num_threads(1)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    ds = SequenceDataset([os.path.join(a.data, "atis.train.ctf")], STREAMS, rank=rank, workers=world,
                         mb=a.mb, seed=a.seed, epoch_size="inf")
    step = 0
    ckpt_file = os.path.join(a.ckpt, "checkpoint.pt")
    if a.resume:
        ck = torch.load(ckpt_file)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        ds.load_state_dict(ck["data"])
        step = ck["step"]
        if rank == 0:
            print("resumed at step %d, data position %d" % (step, ck["data"]["state"]["position"]), flush=True)
    os.makedirs(a.ckpt, exist_ok=True)
    log = open("%s.rank%d" % (a.log, rank), "a") if a.log else None
    first_losses, last_losses = [], []
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100, reduction="sum")
    for mb in ds:
        if step >= a.steps:
            break
        opt.zero_grad()
        local = torch.zeros(2)
        if len(mb.sequences):
            words, labels, lengths = tensors(mb)
            loss = loss_fn(model(words, lengths).reshape(-1, SLOTS), labels.reshape(-1))
            loss.backward()
            local[0], local[1] = loss.detach(), float((labels != -100).sum())
        # The global step: gradients and loss summed over ranks, per token.
        dist.all_reduce(local)
        for p in model.parameters():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            dist.all_reduce(p.grad)
            p.grad /= local[1]
        opt.step()
        mean = float(local[0] / local[1])
        (first_losses if step < 20 else last_losses).append(mean)
        last_losses[:] = last_losses[-20:]
        if log:
            log.write(json.dumps({"step": step, "mb_step": mb.step, "sequences": mb.sequences.tolist(), "loss": mean}) + "\n")
            log.flush()
        step += 1
        if rank == 0 and step % 50 == 0:
            print("step %d loss %.4f" % (step, mean), flush=True)
        if step % a.ckpt_every == 0:
            if rank == 0:
                save_atomic({"model": model.state_dict(), "optimizer": opt.state_dict(), "data": ds.state_dict(),
                             "step": step}, ckpt_file)
            dist.barrier()
        if a.die_after and step == a.die_after:
            os.kill(os.getpid(), signal.SIGKILL)
    if rank == 0:
        if first_losses and last_losses:
            print("loss: first 20 steps %.4f, last 20 steps %.4f" % (np.mean(first_losses), np.mean(last_losses)), flush=True)
        if not a.no_eval:
            print("slot accuracy on atis.test: %.4f" % evaluate(model, os.path.join(a.data, "atis.test.ctf")), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
