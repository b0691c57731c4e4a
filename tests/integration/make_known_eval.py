#!/usr/bin/env python3
"""Writes a data set and a model whose evaluation is known in advance: make_known_eval.py DIR NPZ

DIR gets Fashion-MNIST-style IDX files (28x28 images, gzip): 20 test images, image i lit at one
pixel of class i % 10's own; the training file (for the validation split) is the same 20 images.
Labels are i % 10 except images 3 and 7, labelled 5. NPZ is softmax regression (784 -> 10) that
maps class c's pixel to class c with logit 4, written by numpy.savez_compressed (deflated entries,
zip64 headers) with a model.json: a file from NumPy, not from actorps-export.
Prints the expected test accuracy, loss and the confusion entries that differ from the diagonal."""
import gzip
import json
import math
import struct
import sys

import numpy as np

out_dir, npz = sys.argv[1], sys.argv[2]
n = 20
images = np.zeros((n, 28, 28), np.uint8)
labels = np.array([i % 10 for i in range(n)], np.uint8)
labels[3] = labels[7] = 5
for i in range(n):
    images[i, 3 + i % 10, 5] = 255
for prefix in ("t10k", "train"):
    with gzip.open(f"{out_dir}/{prefix}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
    with gzip.open(f"{out_dir}/{prefix}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + labels.tobytes())
weights = np.zeros((784, 10), np.float32)
for c in range(10):
    weights[(3 + c) * 28 + 5, c] = 4.0
model = {"format": "actorps-model", "version": 1, "model": "28x28x1: dense 10",
         "scaling": {"divide": 255, "mean": [], "stddev": []}}
np.savez_compressed(npz, **{"logits/weights": weights, "logits/bias": np.zeros(10, np.float32),
                            "model.json": np.array(json.dumps(model))})
right = math.log(math.exp(4) + 9) - 4  # -log p of the lit class
wrong = math.log(math.exp(4) + 9)      # -log p of another class
print(json.dumps({"accuracy": 18 / 20, "loss": (18 * right + 2 * wrong) / 20, "wrong": [[5, 3], [5, 7]]}))
