#!/usr/bin/env python3
"""Writes test PNGs without any image library: make_png.py OUT.png WIDTH HEIGHT CHANNELS [SOURCE]

CHANNELS is 1 (grey), 3 (RGB) or 4 (RGBA). SOURCE is an IDX image file (raw or .gz) whose
image INDEX (SOURCE:INDEX) becomes the picture (grey, its own size); without it a gradient."""
import gzip
import struct
import sys
import zlib


def png_bytes(width, height, channels, pixels):
    color = {1: 0, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + bytes(pixels[y * width * channels:(y + 1) * width * channels]) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def idx_image(spec):
    path, index = spec.rsplit(":", 1)
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    n, h, w = struct.unpack(">III", data[4:16])
    start = 16 + int(index) * h * w
    return w, h, list(data[start:start + h * w])


def main():
    out = sys.argv[1]
    if len(sys.argv) > 5:
        width, height, pixels = idx_image(sys.argv[5])
        channels = 1
    else:
        width, height, channels = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        pixels = [(x * 7 + y * 3 + c * 50) % 256 for y in range(height) for x in range(width) for c in range(channels)]
    open(out, "wb").write(png_bytes(width, height, channels, pixels))


if __name__ == "__main__":
    main()
