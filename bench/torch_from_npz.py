#!/usr/bin/env python3
"""Loads an .npz written by actorps-export into the equivalent PyTorch module and prints its test
accuracy (one JSON line): torch_from_npz.py MODEL.npz [DATA_DIR]

DATA_DIR is an MNIST-format IDX directory (t10k-*) or a CIFAR-10 directory (test_batch.bin);
default Fashion-MNIST. The module is built from model.json alone (bench/torch_model.py: every
layer actorps has, batch normalisation with its moving statistics and residual blocks included).
Needs Debian's python3-torch (bench/torch_export_check.sh installs it)."""
import gzip
import json
import os
import struct
import sys

import numpy as np
import torch

from torch_model import build

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
    net = build(model, arrays).eval()
    x, y = test_set(data_dir, model["input"])
    x = torch.from_numpy(x.astype(np.float32) / np.float32(model["scaling"]["divide"]))
    mean, stddev = model["scaling"]["mean"], model["scaling"]["stddev"]
    if mean:
        x = (x - torch.tensor(mean).view(1, -1, 1, 1)) / torch.tensor(stddev).view(1, -1, 1, 1)
    crop = model["scaling"].get("crop", 0)
    if crop:  # the central window (TF's resize_image_with_crop_or_pad)
        top, left = (x.shape[2] - crop) // 2, (x.shape[3] - crop) // 2
        x = x[:, :, top:top + crop, left:left + crop]
    if model["scaling"].get("standardize", False):  # TF's per_image_standardization
        flat = x.reshape(len(x), -1)
        floor = 1.0 / np.sqrt(flat.shape[1])
        x = ((flat - flat.mean(1, keepdim=True)) / flat.std(1, unbiased=False, keepdim=True).clamp(min=floor)).view_as(x)
    torch.set_num_threads(1)
    correct = 0
    with torch.no_grad():
        for first in range(0, len(y), 500):
            logits = net(x[first:first + 500])
            correct += int((logits.argmax(1).numpy() == y[first:first + 500]).sum())
    print(json.dumps({"model": model["model"], "examples": len(y), "torch_test_accuracy": correct / len(y)}))


if __name__ == "__main__":
    main()
