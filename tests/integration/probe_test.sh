#!/usr/bin/env bash
# Probes a node as an attacker or a confused neighbour would, with real processes (issue 11):
#  1. a forged 32-byte BASP header announcing a 0xFFFFFFF0-byte payload before any handshake
#     (it made CAF allocate and zero 4 GiB): the node closes the connection, logs the peer, and
#     its peak memory stays small; random bytes on many connections change nothing either;
#  2. a peer that accepts the connection and then stays silent (a squatter on a shard's port):
#     the chief gives up at cluster.connect-timeout with a message naming it, instead of hanging;
#  3. a second node on a port in use says so;
#  4. a chief frozen with kill -STOP for 5 s: async workers stop within their step grant instead of
#     training on unobserved, and the run still ends at exactly train.max-steps;
#  5. a second chief started by mistake during that run is refused and touches none of its files
#     (it used to truncate metrics.jsonl: NUL bytes, lost rows).
# Usage: probe_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

ps_port=$(free_port) squat_port=$(free_port)
spec=(--cluster.chief=127.0.0.1:$(free_port) --cluster.workers="[\"127.0.0.1:$(free_port)\"]")
peak_mib() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"; }

echo "== 1: forged headers and random bytes before the handshake"
"$bin/actorps-node" --node.role=ps --cluster.ps="[\"127.0.0.1:$ps_port\"]" "${spec[@]}" \
  --cluster.startup-timeout=120s > "$tmp/ps.log" 2>&1 &
ps_pid=$!
for _ in $(seq 1 100); do grep -q "listening at" "$tmp/ps.log" && break; sleep 0.1; done
before=$(peak_mib $ps_pid)
python3 - "$ps_port" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
# operation direct_message, padding, flags, payload_len, operation_data, source_actor, dest_actor
forged = struct.pack(">BBBBIQQQ", 2, 0, 0, 0, 0xFFFFFFF0, 0, 0, 1)
conns = []
for _ in range(2):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(forged)
    conns.append(s)
for _ in range(100):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(os.urandom(64))
    conns.append(s)
time.sleep(2)
closed = 0
for s in conns[:2]:
    s.settimeout(5)
    try:
        while s.recv(4096):
            pass
        closed += 1  # end of stream: the node closed it
    except ConnectionResetError:
        closed += 1
    except socket.timeout:
        pass  # still open
print(f"forged connections closed by the node: {closed} of 2")
sys.exit(0 if closed == 2 else 1)
PY
[[ $? -eq 0 ]] || fail "the node kept a forged connection open"
sleep 0.5
after=$(peak_mib $ps_pid)
echo "peak memory of the shard: ${before} MiB before, ${after} MiB after"
kill -0 $ps_pid 2>/dev/null || fail "the shard died"
[[ $after -lt $((before + 256)) ]] || fail "the shard's peak memory grew from $before to $after MiB"
grep -q "refused 127.0.0.1:[0-9]*: before its handshake it announced a 4294967280-byte message" "$tmp/ps.log" \
  || fail "the shard did not log the refused peer"
grep "refused" "$tmp/ps.log" | head -1

echo "== 3: a second shard on the same port"
out=$("$bin/actorps-node" --node.role=ps --cluster.ps="[\"127.0.0.1:$ps_port\"]" "${spec[@]}" 2>&1); rc=$?
echo "exit $rc: ${out##*error: }"
[[ $rc -ne 0 && "$out" == *"127.0.0.1:$ps_port is in use"* ]] || fail "expected 'is in use', got $rc: $out"
kill $ps_pid; wait $ps_pid 2>/dev/null

echo "== 2: a squatter that accepts and stays silent on a shard's port"
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $squat_port)); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)
" &
squatter=$!
sleep 0.5
start=$SECONDS
out=$(timeout 60 "$bin/actorps-node" --node.role=chief --cluster.ps="[\"127.0.0.1:$squat_port\"]" "${spec[@]}" \
        --cluster.connect-timeout=3s --train.max-steps=10 2>&1); rc=$?
took=$((SECONDS - start))
kill $squatter
echo "exit $rc after ${took} s: $(grep -o "shard 0 at .*" <<< "$out" | head -1)"
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "the chief did not give up by itself (exit $rc)"
[[ "$out" == *"accepted the connection but completed no CAF handshake within 3 s"* ]] \
  || fail "the chief did not name the silent peer: $(tail -3 <<< "$out")"
[[ $took -lt 30 ]] || fail "the chief took $took s"

echo "== 4: a frozen chief (kill -STOP for 5 s) in an async run of 2 workers, 3000 steps"
cluster --workers 2 --name frozen --deadline 240 -- --train.max-steps=3000 --train.max-epochs=0 \
  --train.patience=0 > "$tmp/frozen.out" 2>&1 &
cpid=$!
chief=""
for _ in $(seq 1 300); do
  grep -q "training (" "$tmp/runs/frozen/logs/chief.log" 2>/dev/null && break
  sleep 0.1
done
sleep 1
chief=$(awk '$1 == "chief" {print $2}' "$tmp/runs/frozen/pids" 2>/dev/null)
if [[ -n "$chief" ]] && kill -STOP "$chief"; then
  sleep 5
  kill -CONT "$chief"
  echo "froze the chief (pid $chief) for 5 s"
  echo "== 5: a second chief for the running run"
  out=$(timeout 60 "$bin/actorps-node" --config-file="$tmp/runs/frozen/cluster.ini" --node.role=chief \
          --train.max-steps=3000 2>&1); rc=$?
  echo "exit $rc: ${out##*error: }"
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "the second chief was not refused (exit $rc)"
else
  fail "training never started"
fi
if wait "$cpid"; then
  steps=$(field "$tmp/runs/frozen/summary.json" steps)
  echo "global steps: $steps"
  [[ "$steps" == "3000" ]] || fail "the run ended at $steps steps, not 3000"
  grep -h "stopped at step" "$tmp/runs/frozen/logs/worker-"*.log
  python3 - "$tmp/runs/frozen/metrics.jsonl" <<'PY' || fail "metrics.jsonl of the run was damaged"
import json, sys
raw = open(sys.argv[1], "rb").read()
assert b"\0" not in raw, "NUL bytes"
rows = [json.loads(line) for line in raw.decode().splitlines()]
steps = [r["step"] for r in rows]
assert len(rows) >= 2 and steps == sorted(steps), f"rows at steps {steps}"
print(f"metrics.jsonl intact: {len(rows)} rows at steps {steps}")
PY
else
  fail "the cluster failed after the freeze:"; tail -5 "$tmp/frozen.out"
fi

finish
