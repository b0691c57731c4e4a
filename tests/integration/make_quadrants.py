#!/usr/bin/env python3
"""Writes a small MNIST-format IDX directory for integration tests: 4 classes of 4x4 images,
class c lights up quadrant c. Usage: make_quadrants.py DIR"""
import gzip, os, random, struct, sys

d = sys.argv[1]
os.makedirs(d)
rnd = random.Random(1)
for prefix, n in (("train", 1200), ("t10k", 200)):
    labels, pixels = [], []
    for _ in range(n):
        c = rnd.randrange(4)
        labels.append(c)
        for y in range(4):
            for x in range(4):
                pixels.append((110 if (y // 2) * 2 + x // 2 == c else 50) + rnd.randrange(100))
    with gzip.open(f"{d}/{prefix}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">HBBIII", 0, 8, 3, n, 4, 4) + bytes(pixels))
    with open(f"{d}/{prefix}-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">HBBI", 0, 8, 1, n) + bytes(labels))
