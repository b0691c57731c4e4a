#!/usr/bin/env python3
"""PyTorch twins of actorps models for the benchmarks (Debian's python3-torch; run with
/usr/bin/python3). The network comes from a model.json-like JSON text: {"input": [h, w, c],
"layers": [...]} (bench/torch_model.py builds it); momentum SGD, batch 50, one thread.
  torch_train.py speed MODEL_JSON [seconds=3]          one training step's examples/s on random data
  torch_train.py train MODEL_JSON DATA_DIR STEPS LR MOMENTUM [seed=1] [INIT.npz] [SCHEDULE]
                                                       STEPS steps on an MNIST-format IDX set, then
                                                       the test accuracy (BN in evaluation mode);
                                                       INIT: start from these values (an actorps
                                                       export; "" or none: PyTorch's own
                                                       initialisation); SCHEDULE constant (default)
                                                       or cosine (actorps' train.lr-schedule cosine
                                                       with lr-decay-steps STEPS: update t of 1..STEPS
                                                       at LR * (1 + cos(pi t / STEPS)) / 2)
Every mode prints one JSON line last."""
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

from torch_model import build


def idx(d, name):
    for path in (os.path.join(d, name), os.path.join(d, name + ".gz")):
        if os.path.exists(path):
            return (gzip.open(path) if path.endswith(".gz") else open(path, "rb")).read()
    sys.exit("torch_train: %s: no %s[.gz]" % (d, name))


def images(d, stem):
    raw = idx(d, stem + "-images-idx3-ubyte")
    n, rows, cols = struct.unpack(">III", raw[4:16])
    x = np.frombuffer(raw, np.uint8, offset=16).reshape(n, 1, rows, cols).astype(np.float32) / 255
    y = np.frombuffer(idx(d, stem + "-labels-idx1-ubyte"), np.uint8, offset=8).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def speed(model, seconds):
    torch.set_num_threads(1)
    torch.manual_seed(1)
    net = build(model).train()
    h, w, c = model["input"]
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.rand(50, c, h, w), torch.randint(10, (50,))
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        lossf(net(x), y).backward()
        opt.step()
    for _ in range(3):
        step()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
        n += 1
    print(json.dumps({"torch": torch.__version__, "examples_per_second": round(n * 50 / (time.perf_counter() - t0))}))


def train(model, d, steps, lr, momentum, seed, init, schedule="constant"):
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    xtr, ytr = images(d, "train")
    xte, yte = images(d, "t10k")
    arrays = None
    if init:
        z = np.load(init)
        arrays = {k: z[k] for k in z.keys() if k != "model.json"}
    net = build(model, arrays)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    if schedule not in ("constant", "cosine"):
        sys.exit(f"torch_train.py: unknown schedule {schedule!r} (constant or cosine)")
    # LambdaLR's factor i serves update i + 1 (actorps counts updates from 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.5 * (1 + math.cos(math.pi * min(i + 1, steps) / steps))) \
        if schedule == "cosine" else None
    lossf = torch.nn.CrossEntropyLoss()
    net.train()
    done, t0, perm, at = 0, time.perf_counter(), torch.randperm(len(xtr)), 0
    while done < steps:
        if at + 50 > len(xtr):
            perm, at = torch.randperm(len(xtr)), 0
        b = perm[at:at + 50]
        at += 50
        opt.zero_grad()
        lossf(net(xtr[b]), ytr[b]).backward()
        opt.step()
        if sched:
            sched.step()
        done += 1
    train_s = time.perf_counter() - t0
    net.eval()
    with torch.no_grad():
        acc = sum((net(xte[i:i + 500]).argmax(1) == yte[i:i + 500]).sum().item() for i in range(0, len(xte), 500)) / len(xte)
    print(json.dumps({"torch": torch.__version__, "steps": steps, "examples_per_second": round(steps * 50 / train_s),
                      "test_accuracy": acc}))


if __name__ == "__main__":
    mode, model = sys.argv[1], json.loads(sys.argv[2])
    if mode == "speed":
        speed(model, float(sys.argv[3]) if len(sys.argv) > 3 else 3.0)
    else:
        train(model, sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]),
              int(sys.argv[7]) if len(sys.argv) > 7 else 1, sys.argv[8] if len(sys.argv) > 8 and sys.argv[8] else None,
              sys.argv[9] if len(sys.argv) > 9 else "constant")
