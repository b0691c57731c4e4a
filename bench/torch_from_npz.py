#!/usr/bin/env python3
"""Loads an .npz written by actorps-export into the equivalent PyTorch module and prints its test
accuracy (one JSON line): torch_from_npz.py MODEL.npz [DATA_DIR]

DATA_DIR is an MNIST-format IDX directory (t10k-*) or a CIFAR-10 directory (test_batch.bin);
default Fashion-MNIST. The module is built from model.json alone: dense, conv (TF 'same'/'valid'
padding), max pooling, dropout (inactive in evaluation), the five activations; NHWC flattening
as actorps does. Needs Debian's python3-torch (bench/torch_export_check.sh installs it)."""
import gzip
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATIONS = {"relu": nn.ReLU, "elu": nn.ELU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh,
               "leaky-relu": lambda: nn.LeakyReLU(0.2)}


def same_padding(size, k, stride):
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


class Window(nn.Module):
    """A conv or max pool over NCHW with TF's padding (the odd cell at the bottom and right)."""

    def __init__(self, op, k, stride, same, fill):
        super().__init__()
        self.op, self.k, self.stride, self.same, self.fill = op, k, stride, same, fill

    def forward(self, x):
        if self.same:
            top, bottom = same_padding(x.shape[2], self.k, self.stride)
            left, right = same_padding(x.shape[3], self.k, self.stride)
            x = F.pad(x, (left, right, top, bottom), value=self.fill)
        return self.op(x)


class FlattenNHWC(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1).reshape(x.shape[0], -1) if x.dim() == 4 else x


def parse(text):
    words = text.split()
    kind, rest = words[0], words[1:]
    spec = {"kind": kind, "stride": None, "same": kind == "conv", "act": None}
    i = 0
    if kind in ("dense", "maxpool", "dropout"):
        spec["size"] = rest[0]
        i = 1
    elif kind == "conv":
        k, _, c = rest[0].split("x")
        spec["k"], spec["units"] = int(k), int(c)
        i = 1
    while i < len(rest):
        if rest[i] == "stride":
            spec["stride"] = int(rest[i + 1])
            i += 2
            continue
        if rest[i] in ("same", "valid"):
            spec["same"] = rest[i] == "same"
        else:
            spec["act"] = rest[i]
        i += 1
    return spec


def build(model, arrays):
    h, w, c = model["input"]
    layers, conv_i, dense_i = [], 0, 0
    dense_count = sum(1 for t in model["layers"] if t.startswith("dense"))
    for text in model["layers"]:
        s = parse(text)
        if s["kind"] == "conv":
            name = "conv%d" % conv_i
            conv_i += 1
            kernel = torch.from_numpy(np.ascontiguousarray(arrays[name + "/weights"].transpose(3, 2, 0, 1)))
            conv = nn.Conv2d(c, s["units"], s["k"], stride=s["stride"] or 1)
            conv.weight.data, conv.bias.data = kernel, torch.from_numpy(arrays[name + "/bias"])
            layers.append(Window(conv, s["k"], s["stride"] or 1, s["same"], 0.0))
            c = s["units"]
        elif s["kind"] == "maxpool":
            k = int(s["size"])
            stride = s["stride"] or k
            layers.append(Window(nn.MaxPool2d(k, stride), k, stride, s["same"], float("-inf")))
        elif s["kind"] == "dropout":
            layers.append(nn.Dropout(float(s["size"])))
        else:
            name = "logits" if dense_i == dense_count - 1 else "dense%d" % dense_i
            dense_i += 1
            weights = arrays[name + "/weights"]
            linear = nn.Linear(weights.shape[0], weights.shape[1])
            linear.weight.data = torch.from_numpy(np.ascontiguousarray(weights.T))
            linear.bias.data = torch.from_numpy(arrays[name + "/bias"])
            layers += [FlattenNHWC(), linear]
        if s["act"]:
            layers.append(ACTIVATIONS[s["act"]]())
    return nn.Sequential(*layers).eval()


def test_set(data_dir, shape):
    h, w, c = shape
    cifar = os.path.join(data_dir, "test_batch.bin")
    if os.path.exists(cifar):
        raw = np.fromfile(cifar, np.uint8).reshape(-1, 3073)
        return raw[:, 1:].reshape(-1, 3, 32, 32), raw[:, 0]
    def idx(name):
        for path in (os.path.join(data_dir, name), os.path.join(data_dir, name + ".gz")):
            if os.path.exists(path):
                return (gzip.open(path) if path.endswith(".gz") else open(path, "rb")).read()
        sys.exit("torch_from_npz: %s: no %s[.gz]" % (data_dir, name))
    images = idx("t10k-images-idx3-ubyte")
    labels = idx("t10k-labels-idx1-ubyte")
    n, rows, cols = struct.unpack(">III", images[4:16])
    x = np.frombuffer(images, np.uint8, offset=16).reshape(n, 1, rows, cols)
    return x, np.frombuffer(labels, np.uint8, offset=8)


def main():
    z = np.load(sys.argv[1])
    data_dir = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/datasets/fashion-mnist"
    model = json.loads(str(z["model.json"]))
    arrays = {k: z[k] for k in z.keys() if k != "model.json"}
    net = build(model, arrays)
    x, y = test_set(data_dir, model["input"])
    x = torch.from_numpy(x.astype(np.float32) / np.float32(model["scaling"]["divide"]))
    mean, stddev = model["scaling"]["mean"], model["scaling"]["stddev"]
    if mean:
        x = (x - torch.tensor(mean).view(1, -1, 1, 1)) / torch.tensor(stddev).view(1, -1, 1, 1)
    torch.set_num_threads(1)
    correct = 0
    with torch.no_grad():
        for first in range(0, len(y), 500):
            logits = net(x[first:first + 500])
            correct += int((logits.argmax(1).numpy() == y[first:first + 500]).sum())
    print(json.dumps({"model": model["model"], "examples": len(y), "torch_test_accuracy": correct / len(y)}))


if __name__ == "__main__":
    main()
