#!/usr/bin/env bash
# Integration: real multi-process clusters on 127.0.0.1 through scripts/local-cluster.sh.
#  1. chief + 2 shards + 2 workers train a few hundred steps on Fashion-MNIST, beat chance
#     (10%) by a wide margin, and every process exits 0; the script gave them ports outside the
#     kernel's ephemeral range (scripts/free-ports.py);
#  2. 1x1 and 3 shards x 4 workers run on a small synthetic IDX set, the 4 workers pinned
#     (local-cluster.sh --pin: each worker's log names the CPUs node.cpus gave it, which are the
#     ones the script may use, shared in turn; the ps nodes and the chief are not pinned);
#  3. a worker pointed at a port where nobody listens fails within its deadline naming the peer;
#  4. a bad cluster spec is refused with the key named;
#  5. bf16 with top-k gradients and values over real sockets: it learns, and summary.json's
#     byte counters match the encoding (6 bytes per sent value, at most half of each
#     variable: a selected value that is exactly 0 is not sent);
#  6. cluster.overlap-steps = 1 on the 1 x 1 cluster of 2, and in ssp on 1 x 2 (at half the learning rate: 0.1 with
#     one step of staleness left it at 29-37%): it learns, and the shard's lag histogram shows
#     every push but the first one version behind (a lone worker without overlap, run 2's,
#     pushed every step on the version it was computed on).
# Usage: cluster_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

echo "== 1: chief + 2 shards + 2 workers on Fashion-MNIST, 400 steps"
if cluster --ps 2 --workers 2 --name fashion --deadline 300 -- --train.max-steps=400 --train.progress-every=100 > "$tmp/fashion.out" 2>&1; then
  acc=$(field "$tmp/runs/fashion/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.6 || fail "accuracy $acc is not > 0.6"
  for node in chief ps-0 ps-1 worker-0 worker-1; do
    [[ -s "$tmp/runs/fashion/logs/$node.log" ]] || fail "no log for $node"
  done
  grep -q "placement (round-robin, partitioner none, 2 shards)" "$tmp/runs/fashion/logs/chief.log" || fail "no placement table in the chief's log"
  # the nodes' ports lie outside the kernel's ephemeral range, where another process's bind to
  # port 0 or connection out could take one before its node binds it (a flaky start under ctest -j2)
  read -r low high < /proc/sys/net/ipv4/ip_local_port_range
  for p in $(grep -o '127\.0\.0\.1:[0-9]*' "$tmp/runs/fashion/cluster.ini" | cut -d: -f2); do
    (( p < low || p > high )) || fail "node port $p lies in the ephemeral range $low-$high"
  done
else
  fail "the Fashion-MNIST cluster failed:"; tail -20 "$tmp/fashion.out"
fi

echo "== 2: synthetic data, 1 shard x 1 worker and 3 shards x 4 workers"
python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
for shape in "1 1" "3 4"; do
  set -- $shape
  name="syn-$1x$2"
  pin=(); [[ $2 -gt 1 ]] && pin=(--pin)
  if cluster "${pin[@]}" --ps "$1" --workers "$2" --name "$name" --deadline 120 -- --data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.max-steps=300 \
       --train.learning-rate=0.1 > "$tmp/$name.out" 2>&1; then
    acc=$(field "$tmp/runs/$name/summary.json" test_accuracy)
    echo "$1 shard(s) x $2 worker(s): test accuracy $acc"
    above "$acc" 0.6 || fail "$name: accuracy $acc"
    if [[ ${#pin[@]} -gt 0 ]]; then
      usable=($(python3 -c "import os; print(' '.join(map(str, sorted(os.sched_getaffinity(0)))))"))
      for ((i = 0; i < $2; i++)); do
        want=${usable[$((i % ${#usable[@]}))]} # (one CPU each where there are fewer CPUs than workers)
        [[ ${#usable[@]} -ge $2 ]] && want=""   # (more CPUs: a block each; only its presence is checked)
        grep -q "worker $i: runs on CPUs $want" "$tmp/runs/$name/logs/worker-$i.log" \
          || fail "$name: worker $i's log does not name its CPUs ${want:-(any)}"
      done
      grep -h "runs on CPUs" "$tmp/runs/$name/logs/worker-"*.log
      ! grep -q "runs on CPUs" "$tmp/runs/$name/logs/chief.log" "$tmp/runs/$name/logs/ps-"*.log \
        || fail "$name: a ps node or the chief was pinned"
    fi
  else
    fail "$name failed:"; tail -20 "$tmp/$name.out"
  fi
done

echo "== 3: nobody listens at the chief's port"
port=$(free_port)
start=$SECONDS
out=$("$bin/actorps-node" --node.role=worker --node.index=0 --cluster.chief="127.0.0.1:$port" \
      --cluster.connect-timeout=2s --data.dir="$tmp/data" --model.classes=4 2>&1)
rc=$? took=$((SECONDS - start))
echo "exit $rc after ${took}s: ${out##*error: }"
[[ $rc -eq 1 ]] || fail "unreachable chief: exit $rc, want 1"
[[ "$out" == *"chief at 127.0.0.1:$port did not answer within 2 s"* ]] || fail "unreachable chief: message does not name the peer"
[[ $took -lt 20 ]] || fail "unreachable chief: took ${took}s"

echo "== 4: bad cluster specs"
out=$("$bin/actorps-node" --node.role=ps --node.index=0 --cluster.ps='["127.0.0.1:4250"]' 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"cluster lists 127.0.0.1:4250 twice"* ]] || fail "duplicate port: exit $rc: $out"
out=$("$bin/actorps-node" --node.role=worker --node.index=5 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"node.index is 5 but cluster.workers lists 2 workers"* ]] || fail "missing host: exit $rc: $out"

echo "== 5: bf16 wire, top-k 50% of gradients and values, 1 shard x 2 workers"
if cluster --ps 1 --workers 2 --name wire --deadline 120 -- --data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 \
     --train.max-steps=300 --train.learning-rate=0.1 --cluster.wire-precision='"bf16"' \
     --cluster.gradient-compression='"topk"' --cluster.value-compression='"topk"' --cluster.topk-ratio=0.5 \
     > "$tmp/wire.out" 2>&1; then
  python3 - "$tmp/runs/wire/summary.json" <<'PY' || fail "wire: byte counters or accuracy wrong"
import json, math, sys
s = json.load(open(sys.argv[1]))
inputs = int(s["input"].split("x")[0]) * int(s["input"].split("x")[1]) * int(s["input"].split("x")[2])
sizes = [inputs * 16, 16, 16 * 4, 4]
assert sum(sizes) == s["parameters"], (sizes, s["parameters"])
pushed = sum(math.ceil(0.5 * n) for n in sizes) * 6  # uint32 index + bf16 value
print(f"accuracy {s['test_accuracy']}, pushed {s['sent_bytes_per_step']} bytes/step (expected {pushed}), "
      f"received {s['received_bytes_per_step']:.0f}")
assert s["wire_precision"] == "bf16" and s["gradient_compression"] == "topk" and s["value_compression"] == "topk"
assert 0.5 * pushed <= s["sent_bytes_per_step"] <= pushed
# replies: top-k deltas of the same slices, plus each worker's one fp32 pull before its first step
assert 0.5 * pushed <= s["received_bytes_per_step"] <= pushed + 2 * 4 * sum(sizes) / s["worker_steps"] + 1
assert s["test_accuracy"] > 0.6
PY
else
  fail "the bf16/top-k cluster failed:"; tail -20 "$tmp/wire.out"
fi

echo "== 6: overlapped steps (cluster.overlap-steps = 1), 1 shard x 1 worker"
if cluster --ps 1 --workers 1 --name overlap --deadline 120 -- --data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 \
     --train.max-steps=300 --train.learning-rate=0.05 --cluster.overlap-steps=1 > "$tmp/overlap.out" 2>&1; then
  python3 - "$tmp/runs/syn-1x1" "$tmp/runs/overlap" <<'PY' || fail "overlap: lag or accuracy wrong"
import json, sys
def run(folder):  # the summary, and the shards' lag histogram at the last evaluation (metrics.jsonl)
    rows = [json.loads(line) for line in open(folder + "/metrics.jsonl")]
    return json.load(open(folder + "/summary.json")), [r for r in rows if "lag_histogram" in r][-1]["lag_histogram"]
(alone, alone_lag), (overlap, lag) = run(sys.argv[1]), run(sys.argv[2])
print(f"lag histogram without overlap {alone_lag[:3]}, with {lag[:3]}; "
      f"test accuracy {overlap['test_accuracy']}, {overlap['examples_per_second']:.0f} vs {alone['examples_per_second']:.0f} examples/s")
assert sum(alone_lag[1:]) == 0 and alone_lag[0] > 0
assert sum(lag[2:]) == 0, "a push more than one version behind"
assert lag[1] >= 0.9 * sum(lag), "most pushes should be one version behind"
assert overlap["worker_steps"] == 300 and overlap["test_accuracy"] > 0.6
PY
else
  fail "the overlapped cluster failed:"; tail -20 "$tmp/overlap.out"
fi
if cluster --mode ssp --ps 1 --workers 2 --name overlap-ssp --deadline 120 -- --data.dir="$tmp/data" --model.hidden=[16] \
     --model.classes=4 --train.max-steps=300 --train.learning-rate=0.05 --train.staleness=1 --cluster.overlap-steps=1 \
     > "$tmp/overlap-ssp.out" 2>&1; then
  acc=$(field "$tmp/runs/overlap-ssp/summary.json" test_accuracy)
  echo "ssp (staleness 1) with overlapped steps, 1 shard x 2 workers: test accuracy $acc"
  above "$acc" 0.6 || fail "overlapped ssp: accuracy $acc"
else
  fail "the overlapped ssp cluster failed:"; tail -20 "$tmp/overlap-ssp.out"
fi

finish
