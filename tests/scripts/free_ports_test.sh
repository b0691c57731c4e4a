#!/usr/bin/env bash
# scripts/free-ports.py, which picks the ports of every local cluster's nodes:
#  1. N distinct ports, each outside the kernel's ephemeral range and bindable;
#  2. two callers at once never get the same port (each claims its own);
#  3. a port in use is never given; asking for more than are free fails naming the range;
#  4. --block N gives a base whose N consecutive ports are free and claimed;
#  5. a stale claim (older than its lifetime) is taken over; bad arguments are refused.
# Usage: free_ports_test.sh REPO_ROOT
set -u
pick=$1/scripts/free-ports.py
tmp=$(mktemp -d)
listener=""
trap '[[ -n $listener ]] && kill $listener 2> /dev/null; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
bindable() { python3 -c "import socket,sys; socket.socket().bind(('', int(sys.argv[1])))" "$1" 2> /dev/null; }

echo "== 1: 12 ports"
claims=$(python3 -c "import os, tempfile; print(tempfile.gettempdir())")/actorps-port-claims-$(id -u)
read -r low high < /proc/sys/net/ipv4/ip_local_port_range
mapfile -t ports < <(python3 "$pick" 12)
[[ ${#ports[@]} -eq 12 ]] || fail "asked for 12 ports, got ${#ports[@]}: ${ports[*]}"
[[ $(printf '%s\n' "${ports[@]}" | sort -u | wc -l) -eq ${#ports[@]} ]] || fail "ports repeat: ${ports[*]}"
for p in "${ports[@]}"; do
  (( p < low || p > high )) || fail "port $p lies in the ephemeral range $low-$high"
  (( p >= 1024 )) || fail "port $p is privileged"
  bindable "$p" || fail "port $p cannot be bound"
  [[ -d "$claims/$p" ]] || fail "port $p is not claimed"
done
echo "ports: ${ports[*]} (ephemeral range $low-$high)"

# The other cases' ranges lie in a block of 80 ports claimed for this test where every caller claims
# (so no concurrent test's cluster gets one of them) and then the cases' claims go to a folder of
# this test alone
block=$(python3 "$pick" --block 80) || { echo "FAIL: no block of 80 free ports"; exit 1; }
r0=$block r1=$((block + 59)) l=$((block + 60))
export TMPDIR=$tmp

echo "== 2: two callers at once, 30 ports each from a range of 60"
python3 "$pick" --range $r0-$r1 30 > "$tmp/a" &
python3 "$pick" --range $r0-$r1 30 > "$tmp/b" &
wait
[[ $(wc -l < "$tmp/a") -eq 30 && $(wc -l < "$tmp/b") -eq 30 ]] || fail "each caller wanted 30: $(wc -l < "$tmp/a"), $(wc -l < "$tmp/b")"
shared=$(sort "$tmp/a" "$tmp/b" | uniq -d | tr '\n' ' ')
[[ -z "$shared" ]] || fail "both callers got $shared"
out=$(python3 "$pick" --range $r0-$r1 1 2>&1) && fail "a range whose ports are all claimed gave $out"

echo "== 3: a port in use"
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('', $((l + 1)))); s.listen(1)
open('$tmp/listening', 'w').close(); time.sleep(60)" &
listener=$!
for _ in $(seq 1 50); do [[ -f "$tmp/listening" ]] && break; sleep 0.1; done
got=$(python3 "$pick" --range $l-$((l + 2)) 2 | sort | tr '\n' ' ')
[[ "$got" == "$l $((l + 2)) " ]] || fail "with $((l + 1)) in use, $l-$((l + 2)) gave '$got'"
rm -rf "$tmp/actorps-port-claims-$(id -u)"
out=$(python3 "$pick" --range $l-$((l + 2)) 3 2>&1)
rc=$?
echo "exit $rc: $out"
[[ $rc -eq 1 && "$out" == *"no 3 free ports in $l-$((l + 2))"* ]] || fail "3 of $l-$((l + 2)) with one in use: exit $rc, '$out'"

echo "== 4: --block 4"
base=$(python3 "$pick" --range $l-$((l + 11)) --block 4)
echo "base $base"
[[ "$base" == $((l + 4)) || "$base" == $((l + 8)) ]] || fail "--block 4 of $l-$((l + 11)) with $((l + 1)) in use gave '$base'"
for ((i = 0; i < 4; i++)); do
  bindable $((base + i)) || fail "port $((base + i)) of the block cannot be bound"
  [[ -d "$tmp/actorps-port-claims-$(id -u)/$((base + i))" ]] || fail "port $((base + i)) of the block is not claimed"
done

echo "== 5: stale claims, bad arguments"
rm -rf "$tmp/actorps-port-claims-$(id -u)"
s0=$((l + 12)) s1=$((l + 13))
mkdir -p "$tmp/actorps-port-claims-$(id -u)/$s0" "$tmp/actorps-port-claims-$(id -u)/$s1"
touch -d '10 minutes ago' "$tmp/actorps-port-claims-$(id -u)/$s0"
got=$(python3 "$pick" --range $s0-$s1 1)
[[ "$got" == $s0 ]] || fail "the stale claim of $s0 was not taken over (got '$got'; $s1's claim is fresh)"
for bad in "" "0" "x" "--frob 2"; do
  python3 "$pick" $bad > /dev/null 2>&1
  rc=$?
  [[ $rc -eq 2 ]] || fail "arguments '$bad': exit $rc, want 2"
done

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
