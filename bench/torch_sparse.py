#!/usr/bin/python3
"""The PyTorch twin of actorps-train's text-hash model (bench/sparse_bench.sh): the same class
folders read the same way (lower-cased words and bigrams, 64-bit FNV-1a to ids below 2^30, the
first MAX_TOKENS per example, id mod 2^B picks a row), an EmbeddingBag(2^B, D, mean,
sparse=True), dense 64 relu, dense classes, Adagrad (lr, initial accumulator 0.1), batch 50, one
thread. Prints one JSON line: test accuracy and training examples/s (the steps alone).
Usage: torch_sparse.py CORPUS_DIR EPOCHS [BITS=22] [DIM=32] [LR=0.5] [MAX_TOKENS=400] [SEED=1]"""
import json, os, re, sys, time

import torch

corpus, epochs = sys.argv[1], int(sys.argv[2])
bits, dim = int(sys.argv[3]) if len(sys.argv) > 3 else 22, int(sys.argv[4]) if len(sys.argv) > 4 else 32
lr = float(sys.argv[5]) if len(sys.argv) > 5 else 0.5
max_tokens = int(sys.argv[6]) if len(sys.argv) > 6 else 400
seed = int(sys.argv[7]) if len(sys.argv) > 7 else 1
torch.set_num_threads(1)
torch.manual_seed(seed)
MASK30, PRIME, BASIS = (1 << 30) - 1, 1099511628211, 14695981039346656037


def fnv(token):
    h = BASIS
    for c in token:
        h = ((h ^ c) * PRIME) & 0xFFFFFFFFFFFFFFFF
    return h & MASK30


def ids_of(data):
    out, previous = [], None
    for word in re.finditer(rb"[A-Za-z0-9\x80-\xff]+", data):
        if len(out) >= max_tokens:
            break
        w = word.group().lower()
        out.append(fnv(w))
        if previous is not None and len(out) < max_tokens:
            out.append(fnv(previous + b" " + w))
        previous = w
    return out


def load(split, classes):
    ids, offsets, labels = [], [], []
    for label, name in enumerate(classes):
        folder = os.path.join(corpus, split, name)
        for f in sorted(os.listdir(folder)):
            if f.startswith("."):
                continue
            with open(os.path.join(folder, f), "rb") as fh:
                tokens = ids_of(fh.read())
            offsets.append(len(ids))
            ids.extend(t & ((1 << bits) - 1) for t in tokens)
            labels.append(label)
    return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long), torch.tensor(labels)


classes = sorted(d for d in os.listdir(os.path.join(corpus, "train")) if not d.startswith("."))
train, test = load("train", classes), load("test", classes)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(1 << bits, dim, mode="mean", sparse=True)
        torch.nn.init.trunc_normal_(self.bag.weight, std=dim ** -0.5, a=-2 * dim ** -0.5, b=2 * dim ** -0.5)
        self.hidden = torch.nn.Linear(dim, 64)
        self.logits = torch.nn.Linear(64, len(classes))
        for layer in (self.hidden, self.logits):
            torch.nn.init.kaiming_normal_(layer.weight)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, ids, offsets):
        return self.logits(torch.relu(self.hidden(self.bag(ids, offsets))))


def batch(data, rows):
    ids, offsets, labels = data
    ends = torch.cat([offsets[1:], torch.tensor([len(ids)])])
    pieces = [ids[offsets[r]:ends[r]] for r in rows.tolist()]
    lengths = torch.tensor([0] + [len(p) for p in pieces[:-1]])
    return torch.cat(pieces), torch.cumsum(lengths, 0), labels[rows]


# (actorps-train holds n / 12 of the training examples out for validation: so does the twin)
held = round(len(train[2]) / 12)
keep = torch.randperm(len(train[2]))[held:]
train_rows = keep
net = Net()
opt = torch.optim.Adagrad(net.parameters(), lr=lr, initial_accumulator_value=0.1)
n = len(train_rows)
seconds, examples = 0.0, 0
for epoch in range(epochs):
    order = train_rows[torch.randperm(n)]
    for first in range(0, n, 50):
        rows = order[first:first + 50]
        ids, offsets, labels = batch(train, rows)
        start = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(ids, offsets), labels)
        loss.backward()
        opt.step()
        seconds += time.perf_counter() - start
        examples += len(rows)
with torch.no_grad():
    rows = torch.arange(len(test[2]))
    ids, offsets, labels = batch(test, rows)
    accuracy = (net(ids, offsets).argmax(1) == labels).float().mean().item()
print(json.dumps({"test_accuracy": accuracy, "examples_per_second": examples / seconds, "steps": epochs * ((n + 49) // 50)}))
