#!/usr/bin/env python3
"""Reads an actorps checkpoint directory by docs/checkpoint_format.md alone (no actorps code), as
a check that the document is true: read_checkpoint.py CKPT_DIR [NPZ]

Prints the manifest's fields; with NPZ (numpy needed) checks that every array of the .npz equals
the checkpoint's values bit for bit and exits 1 on any difference."""
import struct
import sys
import zlib


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        size = struct.calcsize(fmt)
        value = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += size
        return value[0] if len(value) == 1 else value

    def string(self):
        n = self.take("Q")
        s = self.data[self.at:self.at + n].decode()
        self.at += n
        return s

    def floats(self):
        n = self.take("Q")
        values = struct.unpack_from("<%df" % n, self.data, self.at)
        self.at += 4 * n
        return list(values)

    def vector(self, element):
        return [element() for _ in range(self.take("Q"))]


def read_manifest(path):
    raw = open(path + "/manifest.bin", "rb").read()
    assert raw[:8] == b"APSCKPT1", "bad magic"
    crc, length = struct.unpack_from("<IQ", raw, 8)
    payload = raw[20:]
    assert len(payload) == length, "truncated"
    assert zlib.crc32(payload) & 0xFFFFFFFF == crc, "checksum mismatch"
    r = Reader(payload)
    m = {"format": r.take("I"), "global_step": r.take("q"), "examples": r.take("q"), "train_seconds": r.take("d"),
         "validation_accuracy": r.take("d"), "model": r.string(), "placement": r.string()}
    m["variables"] = r.vector(lambda: {"name": r.string(), "rows": r.take("i"), "cols": r.take("i"),
                                       "shard": r.take("I")})
    m["optimizer"] = {"kind": r.string(), "learning_rate": r.take("f"), "momentum": r.take("f"), "beta1": r.take("f"),
                      "beta2": r.take("f"), "epsilon": r.take("f"), "decay_rate": r.take("f"),
                      "decay_steps": r.take("q")}
    m["mode"], m["batch_size"], m["seed"], m["workers"] = r.string(), r.take("i"), r.take("Q"), r.take("I")
    m["files"] = r.vector(lambda: {"shard": r.take("I"), "file": r.string(), "bytes": r.take("Q"),
                                   "crc32": r.take("I")})
    if m["format"] >= 2:
        m["input_mean"], m["input_stddev"] = r.floats(), r.floats()
    m["partitioner"] = r.string() if m["format"] >= 3 else "none"
    m["members"] = r.vector(lambda: r.take("I")) if m["format"] >= 4 else []
    m["data_plan"] = r.vector(lambda: r.take("q")) if m["format"] >= 4 else []
    m["class_names"] = r.vector(r.string) if m["format"] >= 5 else []
    m["input_crop"], m["input_source_height"], m["input_source_width"], m["input_standardize"] = (
        (r.take("i"), r.take("i"), r.take("i"), r.take("?")) if m["format"] >= 6 else (0, 0, 0, False))
    m["input_bigrams"] = r.take("?") if m["format"] >= 7 else True
    assert r.at == len(payload), "%d bytes left over in the manifest" % (len(payload) - r.at)
    return m


def read_values(path, manifest):
    values = {}
    for f in manifest["files"]:
        raw = open(path + "/" + f["file"], "rb").read()
        assert len(raw) == f["bytes"] and zlib.crc32(raw) & 0xFFFFFFFF == f["crc32"], f["file"] + ": bad size or crc"
        r = Reader(raw)
        fmt, shard, version = r.take("I"), r.take("I"), r.take("Q")
        assert fmt == manifest["format"] and shard == f["shard"]
        for _ in range(r.take("Q")):
            index, vals, slot0, slot1 = r.take("I"), r.floats(), r.floats(), r.floats()
            values[manifest["variables"][index]["name"]] = vals
        assert r.at == len(raw), f["file"] + ": bytes left over"
    return values


def main():
    path = sys.argv[1]
    m = read_manifest(path)
    values = read_values(path, m)
    print("format %d, step %d, model %s, %d variables, %d parameters" % (
        m["format"], m["global_step"], m["model"], len(values), sum(len(v) for v in values.values())))
    if len(sys.argv) > 2:
        import numpy as np
        z = np.load(sys.argv[2])
        names = sorted(k for k in z.keys() if k != "model.json")
        assert names == sorted(values), "the npz holds %s, the checkpoint %s" % (names, sorted(values))
        for name in names:
            a = z[name]
            assert a.dtype == np.dtype("<f4"), "%s is %s, not little-endian float32" % (name, a.dtype)
            want = np.array(values[name], dtype="<f4")
            if not np.array_equal(a.reshape(-1).view("<u4"), want.view("<u4")):
                print("FAIL: %s differs from the checkpoint" % name)
                sys.exit(1)
        print("every array of %s equals the checkpoint bit for bit (%d arrays)" % (sys.argv[2], len(names)))


if __name__ == "__main__":
    main()
