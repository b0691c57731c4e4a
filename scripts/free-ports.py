#!/usr/bin/env python3
"""Prints TCP ports for a local cluster's nodes, one per line: free on this host now, outside
the kernel's ephemeral range, and claimed for a while so that concurrent callers never pick the
same one.

  scripts/free-ports.py N              N distinct ports
  scripts/free-ports.py --block N      one port B such that B .. B+N-1 are all free (printed: B)
  options: --range LOW-HIGH            pick from LOW..HIGH instead (both inclusive)

Why not bind to port 0 and hand the kernel's choice on: the port is free only until the node
binds it, and meanwhile any process on the host that binds to port 0 (another cluster's stream
listener, a test's server) or connects out gets its port from that same ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range), so the node could find its port taken. Ports below
(or above) that range are never handed out by the kernel; among callers of this script, a claim
(a directory per port under $TMPDIR/actorps-port-claims-<uid>, made atomically, stale after
CLAIM_SECONDS) keeps each port to one caller until its node has bound it.
Exit status 1 with a message naming the range when too few ports are free.
"""
import os
import random
import socket
import sys
import tempfile
import time

CLAIM_SECONDS = 300
LOWEST = 10000  # (well-known and much-used registered ports stay out of the way)


def ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def candidate_range():
    """The larger stretch of ports outside the ephemeral range, at LOWEST or above."""
    low, high = ephemeral_range()
    below = (LOWEST, low - 1)
    above = (high + 1, 65535)
    return max(below, above, key=lambda r: r[1] - r[0])


def bindable(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def claims_dir():
    """The claims' folder, or None (with a line on stderr) where it cannot be made."""
    d = os.path.join(tempfile.gettempdir(), "actorps-port-claims-%d" % os.getuid())
    try:
        os.makedirs(d, exist_ok=True)
        return d
    except OSError as e:
        print("free-ports: no claims (%s: %s); a concurrent caller may pick the same port" % (d, e.strerror),
              file=sys.stderr)
        return None


def sweep(d):
    """Removes the stale claims (so the folder holds only the recent callers' ports)."""
    if d is None:
        return
    now = time.time()
    for entry in os.scandir(d):
        try:
            if now - entry.stat().st_mtime >= CLAIM_SECONDS:
                os.rmdir(entry.path)
        except OSError:  # (taken over or removed by another caller meanwhile)
            pass


def claim(d, port):
    """Whether this caller now holds port's claim (a stale claim of another is taken over)."""
    if d is None:
        return True
    path = os.path.join(d, str(port))
    try:
        os.mkdir(path)
        return True
    except FileExistsError:
        try:
            if time.time() - os.stat(path).st_mtime < CLAIM_SECONDS:
                return False
            os.rmdir(path)
            os.mkdir(path)
            return True
        except OSError:  # (another caller took it over first)
            return False


def pick(count, block, low, high):
    """count ports (block: one base of `block` consecutive ports) or None."""
    d = claims_dir()
    sweep(d)
    width = block or 1
    bases = list(range(low, high - width + 2, width))
    random.shuffle(bases)
    chosen = []
    for base in bases:
        span = range(base, base + width)
        if not all(bindable(p) for p in span):
            continue
        if not all(claim(d, p) for p in span):
            continue  # (a claimed port of the span stays claimed until it goes stale: harmless)
        if not all(bindable(p) for p in span):  # (bound meanwhile by someone who does not claim)
            continue
        chosen.append(base)
        if len(chosen) == count:
            return chosen
    return None


def main(argv):
    args = argv[1:]
    block = 0
    low, high = candidate_range()
    while args and args[0].startswith("--"):
        if args[0] == "--block" and len(args) >= 2:
            block = int(args[1])
            args = args[2:]
        elif args[0] == "--range" and len(args) >= 2:
            low, high = (int(x) for x in args[1].split("-"))
            args = args[2:]
        else:
            print("free-ports: unknown option %r (see the header of %s)" % (args[0], argv[0]), file=sys.stderr)
            return 2
    if block:
        count = 1
    elif len(args) == 1 and args[0].isdigit() and int(args[0]) > 0:
        count = int(args[0])
    else:
        print("usage: free-ports.py N | --block N [--range LOW-HIGH]", file=sys.stderr)
        return 2
    ports = pick(count, block, low, high)
    if ports is None:
        what = "%d consecutive free ports" % block if block else "%d free ports" % count
        print("free-ports: no %s in %d-%d on this host (outside the kernel's ephemeral range %d-%d; "
              "the others are in use or claimed by other callers)" % ((what, low, high) + ephemeral_range()),
              file=sys.stderr)
        return 1
    for p in ports:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
