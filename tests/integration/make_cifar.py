#!/usr/bin/env python3
"""Writes a small CIFAR-10 binary directory for integration tests (no real CIFAR-10 copy is
reachable here): 10 classes of 32x32x3 images; class c paints an 8x8 square in quadrant c % 4,
in colour channel c // 4 (classes 8 and 9: a bar across the top or the left), over noise.
Usage: make_cifar.py DIR [per_batch=200] [test=200]"""
import os, random, sys

d = sys.argv[1]
per_batch = int(sys.argv[2]) if len(sys.argv) > 2 else 200
test = int(sys.argv[3]) if len(sys.argv) > 3 else 200
os.makedirs(d)
rnd = random.Random(1)


def record(c):
    planes = [[rnd.randrange(80) for _ in range(1024)] for _ in range(3)]
    if c < 8:
        oy, ox, ch = (c % 4) // 2 * 16 + 4, (c % 4) % 2 * 16 + 4, c // 4
        for y in range(oy, oy + 8):
            for x in range(ox, ox + 8):
                planes[ch][y * 32 + x] = 200 + rnd.randrange(56)
    else:
        for i in range(32):
            for w in range(4):
                p = w * 32 + i if c == 8 else i * 32 + w
                planes[2][p] = 220
    return bytes([c]) + bytes(planes[0] + planes[1] + planes[2])


def write(name, n):
    with open(os.path.join(d, name), "wb") as f:
        for _ in range(n):
            f.write(record(rnd.randrange(10)))


for b in range(1, 6):
    write(f"data_batch_{b}.bin", per_batch)
write("test_batch.bin", test)
