#!/usr/bin/python3
"""Reads TensorBoard event files as TensorBoard would, independently of the C++ writer: checks
every record's masked CRC-32C (a CRC of its own, bit by bit) and parses every Event with the
protobuf library (python3-protobuf) from a schema built here with TensorFlow's field numbers.

  read_tfevents.py FILE_OR_DIR...   prints one JSON object per record:
  {"file": ..., "step": N, "wall_time": T, "scalars": {tag: value}, "histograms": {tag: {...}},
   "texts": {tag: text}, "file_version": "..."}
Exits 1 naming the file and the record on a bad CRC, a truncated record or an unparsable Event.
"""
import glob
import json
import os
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def schema():
    f = descriptor_pb2.FileDescriptorProto(name="tb_events_test.proto", package="tbtest", syntax="proto3")

    def msg(name, fields):
        m = f.message_type.add(name=name)
        for fname, number, ftype, label, type_name in fields:
            fd = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                fd.type_name = ".tbtest." + type_name
        return m

    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    msg("HistogramProto", [("min", 1, F.TYPE_DOUBLE, opt, None), ("max", 2, F.TYPE_DOUBLE, opt, None),
                           ("num", 3, F.TYPE_DOUBLE, opt, None), ("sum", 4, F.TYPE_DOUBLE, opt, None),
                           ("sum_squares", 5, F.TYPE_DOUBLE, opt, None),
                           ("bucket_limit", 6, F.TYPE_DOUBLE, rep, None), ("bucket", 7, F.TYPE_DOUBLE, rep, None)])
    msg("PluginData", [("plugin_name", 1, F.TYPE_STRING, opt, None), ("content", 2, F.TYPE_BYTES, opt, None)])
    msg("SummaryMetadata", [("plugin_data", 1, F.TYPE_MESSAGE, opt, "PluginData")])
    msg("TensorProto", [("dtype", 1, F.TYPE_INT32, opt, None), ("tensor_shape", 2, F.TYPE_BYTES, opt, None),
                        ("string_val", 8, F.TYPE_BYTES, rep, None)])
    msg("Value", [("tag", 1, F.TYPE_STRING, opt, None), ("simple_value", 2, F.TYPE_FLOAT, opt, None),
                  ("histo", 5, F.TYPE_MESSAGE, opt, "HistogramProto"), ("tensor", 8, F.TYPE_MESSAGE, opt, "TensorProto"),
                  ("metadata", 9, F.TYPE_MESSAGE, opt, "SummaryMetadata")])
    msg("Summary", [("value", 1, F.TYPE_MESSAGE, rep, "Value")])
    msg("Event", [("wall_time", 1, F.TYPE_DOUBLE, opt, None), ("step", 2, F.TYPE_INT64, opt, None),
                  ("file_version", 3, F.TYPE_STRING, opt, None), ("summary", 5, F.TYPE_MESSAGE, opt, "Summary")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    event = pool.FindMessageTypeByName("tbtest.Event")
    if hasattr(message_factory, "GetMessageClass"):  # protobuf 4.21 and later (GetPrototype is gone in 5)
        return message_factory.GetMessageClass(event)
    return message_factory.MessageFactory(pool).GetPrototype(event)  # Debian 12's 3.21


def records(path):
    data = open(path, "rb").read()
    at, n = 0, 0
    while at < len(data):
        if at + 12 > len(data):
            raise ValueError(f"{path}: record {n}: truncated header at byte {at}")
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if crc != masked(header):
            raise ValueError(f"{path}: record {n}: bad length CRC at byte {at}")
        body = data[at + 12:at + 12 + length]
        if len(body) != length or at + 16 + length > len(data):
            raise ValueError(f"{path}: record {n}: truncated at byte {at}")
        (crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if crc != masked(body):
            raise ValueError(f"{path}: record {n}: bad data CRC at byte {at}")
        yield n, body
        at += 16 + length
        n += 1


def main(args):
    Event = schema()
    files = []
    for a in args:
        files += sorted(glob.glob(os.path.join(a, "**", "*tfevents*"), recursive=True)) if os.path.isdir(a) else [a]
    if not files:
        print(f"read_tfevents: no event files under {' '.join(args)}", file=sys.stderr)
        return 1
    for path in files:
        try:
            for n, body in records(path):
                e = Event()
                e.ParseFromString(body)
                out = {"file": path, "record": n, "step": e.step, "wall_time": e.wall_time}
                if e.file_version:
                    out["file_version"] = e.file_version
                for v in e.summary.value:
                    if v.HasField("histo"):
                        h = v.histo
                        out.setdefault("histograms", {})[v.tag] = {
                            "num": h.num, "sum": h.sum, "min": h.min, "max": h.max,
                            "bucket_limit": list(h.bucket_limit), "bucket": list(h.bucket)}
                    elif v.HasField("tensor"):
                        out.setdefault("texts", {})[v.tag] = b"".join(v.tensor.string_val).decode()
                    else:
                        out.setdefault("scalars", {})[v.tag] = v.simple_value
                print(json.dumps(out))
        except Exception as err:  # a bad CRC, a truncated record, an Event that does not parse
            print(f"read_tfevents: {err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
