#!/usr/bin/env bash
# The tensor stream (cluster.tensor-stream) with real processes on 127.0.0.1, every tensor as
# frames (cluster.stream-min-bytes = 0) unless a run says otherwise:
#  1. seeded sync runs end with the same weights over the stream (the same host's local socket,
#     its pushes' gradients in the workers' shared heaps or, with cluster.local-shared-memory
#     = false, as frames; TCP with cluster.local-streams = false; the tensors inside the typed
#     messages in band, the default for this small model's) as over BASP alone, also with each
#     variable pushed as backprop completes it, and bf16 through the shared heaps as bf16 on BASP;
#  2. async with bf16 values and top-k gradients and values trains over the stream, and async
#     fp32 and bf16 with their gradients and values read and written where they lie in the workers'
#     shared heaps (bf16 as floats rounded to it, counted at its 2 bytes a value);
#  3. a TLS cluster moves its tensors on TLS streams over TCP, and plain on its host's local socket;
#  4. kill -9 of a sync worker: its stream closes, the aggregator releases it, training goes on;
#  5. strangers on a ps node's stream port (a forged 4 GiB frame, random bytes, a frame of an
#     unannounced transfer that would wait) are closed and logged, the node's memory stays small,
#     and a worker started afterwards still trains over it.
# Usage: tensor_stream_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
frames=(--cluster.stream-min-bytes=0)

# Runs the cluster NAME (the rest: local-cluster.sh's arguments, naming it NAME), then checks that
# its test accuracy is above 0.7 and that worker 1's log says LINE.
trains_saying() {
  local name=$1 line=$2
  shift 2
  if cluster "$@" > "$tmp/$name.out" 2>&1; then
    local acc
    acc=$(field "$tmp/runs/$name/summary.json" test_accuracy)
    echo "$name: test accuracy $acc"
    above "$acc" 0.7 || fail "$name: accuracy $acc is not > 0.7"
    grep -qF "$line" "$tmp/runs/$name/logs/worker-1.log" || fail "$name: worker 1 did not say: $line"
  else
    fail "the $name run failed:"; tail -20 "$tmp/$name.out"
  fi
}

echo "== 1: seeded sync runs: the same weights over the stream and over BASP"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
small=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.1 --train.seed=7
       --train.max-steps=150 --train.max-epochs=0 --train.patience=0)
declare -A how=([basp]="--cluster.tensor-stream=false" [stream]="${frames[*]}" [inline]=""
                [unshared]="${frames[*]} --cluster.local-shared-memory=false"
                [tcp]="${frames[*]} --cluster.local-streams=false" [parts]="${frames[*]} --cluster.push-bucket-bytes=1"
                [bf16-basp]="--cluster.tensor-stream=false --cluster.wire-precision=\"bf16\""
                [bf16-stream]="${frames[*]} --cluster.wire-precision=\"bf16\"")
for run in basp stream unshared inline tcp parts bf16-basp bf16-stream; do
  # shellcheck disable=SC2086
  cluster --mode sync --ps 2 --workers 3 --name "det-$run" --deadline 120 -- "${small[@]}" ${how[$run]} \
    > "$tmp/det-$run.out" 2>&1 || { fail "seeded run $run failed"; tail -20 "$tmp/det-$run.out"; }
done
grep -q "tensor stream to shard 1 (127.0.0.1, same host: local socket)" "$tmp/runs/det-stream/logs/worker-0.log" \
  || fail "worker 0 did not open a local-socket stream to shard 1"
grep -q "tensor stream to shard 1 (127.0.0.1:[0-9]*)" "$tmp/runs/det-tcp/logs/worker-0.log" \
  || fail "worker 0 did not open a TCP stream to shard 1 with cluster.local-streams = false"
grep -q "tensor stream to shard" "$tmp/runs/det-basp/logs/worker-0.log" && fail "tensor-stream = false opened a stream"
grep -q "tensor stream to shard 1 (127.0.0.1, same host: local socket); pushes exchange their gradients and values through this process's shared memory" \
  "$tmp/runs/det-stream/logs/worker-0.log" || fail "worker 0's pushes to shard 1 do not go through shared memory"
grep -q "shared memory" "$tmp/runs/det-unshared/logs/worker-0.log" && fail "local-shared-memory = false shared them"
same_weights det-basp det-stream "the stream and BASP"
same_weights det-basp det-unshared "the stream's tensors as frames and BASP"
same_weights det-basp det-inline "the tensors inside the stream's messages and BASP"
same_weights det-basp det-tcp "the stream over TCP and BASP"
same_weights det-basp det-parts "the stream with a push per variable and BASP"
same_weights det-bf16-basp det-bf16-stream "bf16 through the shared heaps (rounded floats) and bf16 encoded on BASP"

echo "== 2: async, bf16 values, top-k gradients and values, over the stream"
if cluster --ps 1 --workers 2 --name compressed --deadline 300 -- --train.max-steps=600 --model.hidden=[64] "${frames[@]}" \
     --cluster.wire-precision='"bf16"' --cluster.gradient-compression='"topk"' --cluster.value-compression='"topk"' \
     --cluster.topk-ratio=0.05 > "$tmp/compressed.out" 2>&1; then
  acc=$(field "$tmp/runs/compressed/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.6 || fail "accuracy $acc is not > 0.6"
else
  fail "the compressed run failed:"; tail -20 "$tmp/compressed.out"
fi

# async fp32 over the same host's local socket: the pushes go through the workers' shared heaps;
# bf16 too, as floats rounded to it, counted at 2 bytes a value each way
trains_saying shared "pushes exchange their gradients and values through this process's shared memory" \
  --ps 1 --workers 2 --name shared --deadline 300 -- --train.max-steps=300 --model.hidden=[64] "${frames[@]}"
trains_saying shared-bf16 "pushes exchange their gradients and values through this process's shared memory" \
  --ps 1 --workers 2 --name shared-bf16 --deadline 300 -- --train.max-steps=300 --model.hidden=[64] "${frames[@]}" \
  --cluster.wire-precision='"bf16"'
python3 - "$tmp/runs/shared-bf16/summary.json" <<'PY' || fail "shared-bf16: byte counters are not bf16's"
import json, sys
s = json.load(open(sys.argv[1]))
params, steps = s["parameters"], s["worker_steps"]
print(f"bf16 through the heaps: sent {s['sent_bytes_per_step']} received {s['received_bytes_per_step']:.0f} bytes/step, {params} parameters")
assert s["sent_bytes_per_step"] == 2 * params, s
assert 2 * params <= s["received_bytes_per_step"] <= 2 * params + 2 * 4 * params / steps + 1, s  # (+ each worker's first pull, fp32)
PY

echo "== 3: TLS streams"
# (the same host's local socket never leaves it: plain, its peer's user checked)
trains_saying tls "tensor stream to shard 0 (127.0.0.1, same host: local socket) (not encrypted" \
  --tls --ps 1 --workers 2 --name tls --deadline 300 -- --train.max-steps=300 --model.hidden=[64] "${frames[@]}"
if cluster --tls --ps 1 --workers 2 --name tls-tcp --deadline 300 -- --train.max-steps=150 --model.hidden=[64] "${frames[@]}" \
     --cluster.local-streams=false > "$tmp/tls-tcp.out" 2>&1; then
  grep -Eq "tensor stream to shard 0 \(127.0.0.1:[0-9]+\) \(TLS\)" "$tmp/runs/tls-tcp/logs/worker-1.log" \
    || fail "worker 1 has no TLS stream over TCP"
else
  fail "the TLS run over TCP failed:"; tail -20 "$tmp/tls-tcp.out"
fi

echo "== 4: kill -9 one sync worker of three: its stream closes, training goes on"
killopts=("${small[@]/--train.max-steps=150/--train.max-seconds=4.0}" "${frames[@]}" --cluster.report-every=10)
cluster --mode sync --ps 1 --workers 3 --name kill --deadline 180 --tolerate worker-2 -- "${killopts[@]}" \
  > "$tmp/kill.out" 2>&1 &
cpid=$!
victim=$(kill_when_training kill worker-2)
[[ -n "$victim" ]] && echo "killed worker-2 (pid $victim)" || fail "training never started"
if wait "$cpid"; then
  echo "finished: $(field "$tmp/runs/kill/summary.json" steps) worker steps"
  grep -q "no longer waits for worker 2" "$tmp/runs/kill/logs/ps-0.log" || fail "the aggregator did not release worker 2"
else
  fail "training stopped after the kill"; tail -20 "$tmp/kill.out"
fi

echo "== 5: strangers on a ps node's stream port"
chief=127.0.0.1:$(free_port) ps=127.0.0.1:$(free_port) w0=127.0.0.1:$(free_port)
spec=(--cluster.chief="$chief" --cluster.ps="[\"$ps\"]" --cluster.workers="[\"$w0\"]" "${frames[@]}"
      --cluster.request-timeout=3s)
"$bin/actorps-node" --node.role=ps "${spec[@]}" --cluster.startup-timeout=120s > "$tmp/ps.log" 2>&1 &
ps_pid=$!
for _ in $(seq 1 100); do grep -q "tensor streams: listening at port" "$tmp/ps.log" && break; sleep 0.1; done
port=$(grep -o "tensor streams: listening at port [0-9]*" "$tmp/ps.log" | grep -o "[0-9]*$")
[[ -n "$port" ]] || fail "the ps node did not log its stream port"
peak_mib() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"; }
before=$(peak_mib $ps_pid)
python3 - "$port" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
def header(transfer, index, size):  # magic APTS, version 1, flags 0, transfer, index, bytes
    return b"APTS" + struct.pack("<HHQII", 1, 0, transfer, index, size)
conns = {"forged 4 GiB first frame": header(0, 0, 0xFFFFFFF0), "random bytes": os.urandom(64),
         "a frame of an unannounced transfer": header(7, 0, 4096) + os.urandom(4096)}
open_ = {}
for what, data in conns.items():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    open_[what] = s
for _ in range(50):  # and many random strangers
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(os.urandom(64)); s.close()
failed = 0
for what, s in open_.items():
    s.settimeout(10)  # (the waiting frame is closed at cluster.request-timeout, 3 s)
    try:
        while s.recv(4096):
            pass
        print(f"closed by the node: {what}")
    except ConnectionResetError:
        print(f"closed by the node: {what}")
    except socket.timeout:
        print(f"still open after 10 s: {what}"); failed += 1
sys.exit(failed)
PY
[[ $? -eq 0 ]] || fail "the ps node kept a stranger's stream open"
after=$(peak_mib $ps_pid)
echo "peak memory of the ps node: ${before} MiB before, ${after} MiB after"
[[ $after -lt $((before + 64)) ]] || fail "the ps node's peak memory grew from $before to $after MiB"
grep -q "closed a stream before it said whose it is: protocol_error: tensor stream from 127.0.0.1:[0-9]*: " "$tmp/ps.log" \
  || fail "the ps node did not log a refused stranger by address"
grep -q "closed the stream from 127.0.0.1:[0-9]*: no first frame with an offered token" "$tmp/ps.log" \
  || fail "the ps node did not close the waiting stranger"
grep "tensor streams: closed" "$tmp/ps.log" | head -2
"$bin/actorps-node" --node.role=chief "${spec[@]}" --train.max-steps=100 --train.max-epochs=0 \
  --train.run-dir="$tmp/runs" --train.name=after > "$tmp/chief.log" 2>&1 &
chief_pid=$!
"$bin/actorps-node" --node.role=worker --node.index=0 "${spec[@]}" > "$tmp/worker.log" 2>&1
wrc=$?
wait $chief_pid; crc=$?
[[ $wrc -eq 0 && $crc -eq 0 ]] || { fail "training after the strangers failed (worker $wrc, chief $crc)"; tail -n 5 "$tmp/worker.log" "$tmp/chief.log"; }
grep -q "tensor stream to shard 0" "$tmp/worker.log" || fail "the worker did not use the stream"
kill $ps_pid 2>/dev/null; wait $ps_pid 2>/dev/null
finish
