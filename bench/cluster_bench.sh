#!/usr/bin/env bash
# The data-path benchmarks, measured side by side in one run, ending with the goals table of the
# data-path issues:
#  1. a 1 MiB push + pull between two processes to a ps node, over the tensor stream and over
#     BASP, plain and TLS, on the same host's local socket and over TCP, vs raw TCP and
#     local-socket echoes (actorps-bench-transfer): a push then a pull, both at once, and one
#     push asking its values back (one exchange, as an async worker's step);
#  2. async cluster examples/s (1 shard, 2 workers, batch 50, one process per node), plain and
#     TLS, streams over TCP instead of the local socket, tensors as frames on it instead of
#     through the workers' shared heaps (cluster.local-shared-memory = false), without wait-free backprop (cluster.push-bucket-bytes = 0), with overlapped steps
#     (cluster.overlap-steps = 1), and with each worker on a core of its own (local-cluster.sh --pin), vs the single-process
#     trainer (the median of three runs spread through the section) and PyTorch's RPC parameter server with 2 trainers
#     (../shared/bench/torch_reference.py rpc), same number of steps;
#  3. the wire encodings on 127.0.0.1 (fp32, bf16, top-k 1% of the gradients, the same with
#     momentum correction, the same with DGC's warm-up over the first epoch, top-k 1% of the
#     gradients and of the values' changes): tensor bytes per step and test accuracy after the
#     same number of steps (10 epochs by default);
#  4. as root: the same cluster on an emulated 1 Gbit/s network (bench/netem_cluster.sh), and the
#     cnn preset there with and without wait-free backprop;
#  5. the cnn preset's scaling: the async cluster (1 shard, 2 workers) over the single process
#     against PyTorch DDP (gloo) with 2 processes over 1 (../shared/bench/torch_reference.py ddp),
#     the same number of batches of 50 on each side, ROUNDS interleaved rounds, and the same
#     cluster over TLS in each round;
#  6. as root: the cnn cluster on an emulated 10 Gbit/s network against the same on 127.0.0.1
#     (bench/netem_cluster.sh --rates "loopback 10gbit"), ddp-batches steps.
# Usage: bench/cluster_bench.sh [steps=4400] [accuracy-steps=11000] [cnn-steps=600] [ddp-batches=2000]
#        [rounds=3]   (after scripts/build.sh; SECTIONS=56 runs only the sections listed, default 123456)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-4400}
acc_steps=${2:-11000}
warmup_steps=$((acc_steps / 10)) # DGC's warm-up: the first epoch of the 10
cnn_steps=${3:-600}
ddp_batches=${4:-2000}
rounds=${5:-3}
sections=${SECTIONS:-123456}
bin=build/bin
data=${ACTORPS_DATA_DIR:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
bench/install_torch.sh cluster_bench

single=0 cluster=0 tls=0 tcp=0 frames=0 onepush=0 overlap=0 pinned=0 torch_rpc=0 wire_settings=""
: > "$tmp/transfer.txt"
if [[ $sections == *1* ]]; then
echo "== 1. transfer"
"$bin/actorps-bench-transfer" 3 2> /dev/null | tee "$tmp/transfer.txt"
fi

if [[ $sections == *2* ]]; then
echo "== 2. training throughput, $steps steps of batch 50, CPU backend"
common=(--train.max-steps="$steps" --train.progress-every=100000 --compute.device=cpu)
# (the single process three times, spread through the section: its median is the anchor, so one
# run caught by the shared machine's noise does not move every ratio)
single_run() { "$bin/actorps-train" "${common[@]}" --train.run-dir="$tmp" --train.name="single-$1" > /dev/null 2>&1; }
single_run 1
scripts/local-cluster.sh --ps 1 --workers 2 --name cluster --run-dir "$tmp" -- "${common[@]}" > /dev/null 2>&1
scripts/local-cluster.sh --tls --ps 1 --workers 2 --name tls --run-dir "$tmp" -- "${common[@]}" > /dev/null 2>&1
scripts/local-cluster.sh --ps 1 --workers 2 --name tcp --run-dir "$tmp" -- "${common[@]}" \
  --cluster.local-streams=false > /dev/null 2>&1
scripts/local-cluster.sh --ps 1 --workers 2 --name frames --run-dir "$tmp" -- "${common[@]}" \
  --cluster.local-shared-memory=false > /dev/null 2>&1
single_run 2
scripts/local-cluster.sh --ps 1 --workers 2 --name onepush --run-dir "$tmp" -- "${common[@]}" \
  --cluster.push-bucket-bytes=0 > /dev/null 2>&1
scripts/local-cluster.sh --ps 1 --workers 2 --name overlap --run-dir "$tmp" -- "${common[@]}" \
  --cluster.overlap-steps=1 > /dev/null 2>&1
scripts/local-cluster.sh --pin --ps 1 --workers 2 --name pinned --run-dir "$tmp" -- "${common[@]}" > /dev/null 2>&1
single_run 3
$py ../shared/bench/torch_reference.py rpc "$data" 2 $((steps / 2)) 2> /dev/null | tail -n 1 > "$tmp/torch_rpc.json"
singles=$(for r in 1 2 3; do printf '%.0f\n' "$(field "$tmp/single-$r/summary.json" examples_per_second)"; done | sort -g | tr '\n' ' ')
single=$(echo "$singles" | awk '{print $2}') # (the median)
cluster=$(field "$tmp/cluster/summary.json" examples_per_second)
tls=$(field "$tmp/tls/summary.json" examples_per_second)
tcp=$(field "$tmp/tcp/summary.json" examples_per_second)
frames=$(field "$tmp/frames/summary.json" examples_per_second)
onepush=$(field "$tmp/onepush/summary.json" examples_per_second)
overlap=$(field "$tmp/overlap/summary.json" examples_per_second)
pinned=$(field "$tmp/pinned/summary.json" examples_per_second)
torch_rpc=$(field "$tmp/torch_rpc.json" examples_per_second)
echo "single-process trainer, three runs: $singles examples/s (the median is the anchor)"
printf '%-44s %9.0f examples/s\n' "single-process trainer" "$single" "async cluster, 1 shard, 2 workers" "$cluster" \
  "the same cluster over TLS" "$tls" "the same, streams over TCP (cluster.local-streams=false)" "$tcp" \
  "the same, tensors as frames (cluster.local-shared-memory=false)" "$frames" \
  "the same, one push after backprop (no overlap)" "$onepush" \
  "the same, overlapped steps (cluster.overlap-steps=1)" "$overlap" \
  "the same, each worker on a core of its own (--pin)" "$pinned" \
  "PyTorch RPC parameter server, 2 trainers" "$torch_rpc"
fi

if [[ $sections == *3* ]]; then
echo "== 3. wire encodings, async cluster on 127.0.0.1, $acc_steps steps each"
wire_settings="fp32 bf16 topk topk-mc topk-warm topk-both"
for setting in $wire_settings; do
  case "$setting" in
    fp32) opts=() ;;
    bf16) opts=(--cluster.wire-precision='"bf16"') ;;
    topk) opts=(--cluster.gradient-compression='"topk"') ;;
    topk-mc) opts=(--cluster.gradient-compression='"topk"' --cluster.momentum-correction) ;;
    topk-warm) opts=(--cluster.gradient-compression='"topk"' --cluster.topk-warmup-steps="$warmup_steps") ;;
    topk-both) opts=(--cluster.gradient-compression='"topk"' --cluster.value-compression='"topk"') ;;
  esac
  scripts/local-cluster.sh --ps 1 --workers 2 --name "wire-$setting" --run-dir "$tmp" -- \
    --train.max-steps="$acc_steps" --train.progress-every=100000 --compute.device=cpu "${opts[@]}" > /dev/null 2>&1
  s="$tmp/wire-$setting/summary.json"
  printf '  %-10s %9.0f examples/s  pushed %8.0f  received %8.0f tensor bytes/step  final test accuracy %.4f\n' \
    "$setting" "$(field "$s" examples_per_second)" "$(field "$s" sent_bytes_per_step)" \
    "$(field "$s" received_bytes_per_step)" "$(field "$s" final_test_accuracy)"
done
fi

: > "$tmp/netem.txt"
if [[ $sections != *4* ]]; then
  :
elif [[ $(id -u) -eq 0 ]]; then
  echo "== 4. emulated network"
  bench/netem_cluster.sh --rates 1gbit --settings "fp32 fp32-onepush bf16 topk topk-both" --results "$tmp/netem.txt"
  bench/netem_cluster.sh --rates 1gbit --steps "$cnn_steps" --settings "fp32 fp32-onepush" --results "$tmp/netem-cnn.txt" \
    -- --model.preset='"cnn"' || echo "cluster_bench: the cnn runs on the emulated network failed"
else
  echo "== 4. emulated network: skipped (needs root for ip netns and tc)"
fi

: > "$tmp/ddp.txt"
if [[ $sections == *5* ]]; then
echo "== 5. cnn preset: async cluster (1 shard, 2 workers) / single process vs PyTorch DDP 2 / 1 processes, $ddp_batches batches of 50, $rounds rounds"
cnn=(--model.preset='"cnn"' --train.max-steps="$ddp_batches" --train.max-epochs=0 --train.patience=0
     --train.eval-every-epochs=0 --train.progress-every=100000 --compute.device=cpu)
for ((r = 1; r <= rounds; r++)); do
  "$bin/actorps-train" "${cnn[@]}" --train.run-dir="$tmp" --train.name="cnn-single-$r" > /dev/null 2>&1
  scripts/local-cluster.sh --ps 1 --workers 2 --name "cnn-cluster-$r" --run-dir "$tmp" -- "${cnn[@]}" > /dev/null 2>&1
  ddp1=$($py ../shared/bench/torch_reference.py ddp "$data" 1 "$ddp_batches" cnn 2> /dev/null | tail -n 1)
  ddp2=$($py ../shared/bench/torch_reference.py ddp "$data" 2 $((ddp_batches / 2)) cnn 2> /dev/null | tail -n 1)
  scripts/local-cluster.sh --tls --ps 1 --workers 2 --name "cnn-tls-$r" --run-dir "$tmp" -- "${cnn[@]}" > /dev/null 2>&1
  $py - "$r" "$tmp/cnn-single-$r/summary.json" "$tmp/cnn-cluster-$r/summary.json" "$ddp1" "$ddp2" \
    "$tmp/cnn-tls-$r/summary.json" <<'PY' | tee -a "$tmp/ddp.txt"
import json, sys
r, single, cluster = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ddp1, ddp2, tls = json.loads(sys.argv[4]), json.loads(sys.argv[5]), json.load(open(sys.argv[6]))
a, b = cluster["examples_per_second"] / single["examples_per_second"], ddp2["examples_per_second"] / ddp1["examples_per_second"]
print(f"round {r}: actorps single {single['examples_per_second']:.0f}, cluster {cluster['examples_per_second']:.0f} "
      f"examples/s: {a:.2f}x; PyTorch 1 process {ddp1['examples_per_second']}, DDP 2 {ddp2['examples_per_second']}: "
      f"{b:.2f}x; ratio of ratios {a / b:.2f}; TLS cluster {tls['examples_per_second']:.0f}: "
      f"{tls['examples_per_second'] / cluster['examples_per_second']:.2f}x of plain")
PY
done
fi

: > "$tmp/netem-10g.txt"
if [[ $sections != *6* ]]; then
  :
elif [[ $(id -u) -eq 0 ]]; then
  echo "== 6. cnn cluster on an emulated 10 Gbit/s network vs 127.0.0.1, $ddp_batches steps"
  bench/netem_cluster.sh --rates "loopback 10gbit" --steps "$ddp_batches" --settings fp32 --results "$tmp/netem-10g.txt" \
    -- --model.preset='"cnn"' || echo "cluster_bench: the cnn runs on the emulated network failed"
else
  echo "== 6. emulated network: skipped (needs root for ip netns and tc)"
fi

echo "== goals"
$py - "$tmp" "$single" "$cluster" "$tls" "$torch_rpc" "$onepush" "$overlap" "$wire_settings" "$tcp" "$pinned" "$frames" <<'PY'
import json, os, re, sys
tmp = sys.argv[1]
single, cluster, tls, torch_rpc, onepush, overlap = map(float, sys.argv[2:8])
tcp, pinned, frames = float(sys.argv[9]), float(sys.argv[10]), float(sys.argv[11])
transfer = open(f"{tmp}/transfer.txt").read()
three = r"([0-9.]+) push then pull, ([0-9.]+) pipelined, ([0-9.]+) one exchange" # (actorps-bench-transfer's ways)
m = re.search(r"shard over the stream \(local socket\) / raw TCP: " + three + r".*raw local-socket echo: " + three, transfer)
tcp_stream = re.search(r"shard over the stream \(TCP\) / raw TCP: " + three + r"; with each push's 1 MiB of gradients written anew.*?: " + three, transfer)
basp = re.search(r"shard over BASP / raw TCP: " + three, transfer)
tls_stream = re.search(r"TLS cluster / plain, shard over the stream: local socket " + three + r".*; TCP \(TLS 1.3\) " + three, transfer)
def ways(g, at=1): # "a / b / c" of the three ways from group `at` on
    return " / ".join(f"{g.group(i)}x" for i in range(at, at + 3))
wire = {s: json.load(open(f"{tmp}/wire-{s}/summary.json")) for s in sys.argv[8].split()}
def total(s): return wire[s]["sent_bytes_per_step"] + wire[s]["received_bytes_per_step"]
def points(s): return 100 * (wire[s]["final_test_accuracy"] - wire["fp32"]["final_test_accuracy"])
def topk_row(label, s): # gradient bytes against fp32's, and the accuracy difference
    return (f"{label}: gradient bytes / accuracy",
            f"{wire[s]['sent_bytes_per_step'] / wire['fp32']['sent_bytes_per_step']:.3f}x / {points(s):+.2f} points",
            "<= 0.05x / within 0.5 points")
rows = []
if m:
    rows.append(("1 MiB push+pull over the tensor stream vs raw TCP echo (push then pull / pipelined / one exchange)",
                 f"same host (local socket): {ways(m)} (of a raw local-socket echo: {ways(m, 4)}); TCP: {ways(tcp_stream)} "
                 f"(each push's gradients written anew, as a worker's step writes them: {ways(tcp_stream, 4)}); "
                 f"BASP: {ways(basp)}", ">= 0.8x"))
if tls_stream:
    rows.append(("TLS vs plain, 1 MiB push+pull over the stream (the same three ways)",
                 f"local socket (plain: it stays on the host) {ways(tls_stream)}; TCP {ways(tls_stream, 4)}", ">= 0.85x"))
if single > 0:
    rows += [
      ("async cluster (1 shard, 2 workers) vs single process, fp32",
       f"{cluster / single:.2f}x (tensors as frames, no shared heap: {frames / single:.2f}x; streams over TCP: {tcp / single:.2f}x)", ">= 0.8x"),
      ("wait-free backprop: the same vs one push after backprop", f"{cluster / onepush:.2f}x", "-"),
      ("overlapped steps (cluster.overlap-steps = 1) vs single process", f"{overlap / single:.2f}x", ">= 0.8x"),
      ("each worker on a core of its own (local-cluster.sh --pin) vs single process", f"{pinned / single:.2f}x", ">= 0.8x"),
      ("the same vs PyTorch RPC PS, 2 trainers", f"{cluster / torch_rpc:.2f}x", ">= 3x"),
      ("TLS cluster vs plain cluster", f"{tls / cluster:.2f}x", ">= 0.85x"),
    ]
if wire:
    rows += [
      ("bf16 wire: bytes per step / accuracy", f"{total('bf16') / total('fp32'):.3f}x / {points('bf16'):+.2f} points",
       "0.5x / within 0.3 points"),
      topk_row("top-k 1% (gradients)", "topk"),
      topk_row("top-k 1% with momentum correction", "topk-mc"),
      topk_row("top-k 1% with DGC's warm-up (first epoch)", "topk-warm"),
      ("top-k 1% (gradients and values): all bytes / accuracy",
       f"{total('topk-both') / total('fp32'):.3f}x / {points('topk-both'):+.2f} points", "-"),
    ]
ddp = [l for l in open(f"{tmp}/ddp.txt")]
if ddp:
    mine = [float(re.search(r"examples/s: ([0-9.]+)x", l).group(1)) for l in ddp]
    theirs = [float(re.search(r"DDP 2 [0-9]+: ([0-9.]+)x", l).group(1)) for l in ddp]
    rows.append(("cnn cluster (1 shard, 2 workers) / single vs DDP 2 / 1 processes, by round",
                 ", ".join(f"{a:.2f}x vs {b:.2f}x" for a, b in zip(mine, theirs)),
                 ">= DDP's ratio in every round, and >= 1.8x"))
    tls_cnn = [float(re.search(r"TLS cluster [0-9]+: ([0-9.]+)x of plain", l).group(1)) for l in ddp]
    rows.append(("TLS vs plain, cnn cluster, by round", ", ".join(f"{t:.2f}x" for t in tls_cnn), ">= 0.85x"))
ten = {}
if os.path.exists(f"{tmp}/netem-10g.txt"):
    for line in open(f"{tmp}/netem-10g.txt"):
        rate, setting, eps, *_ = line.split()
        ten[rate] = float(eps)
if "loopback" in ten and "10gbit" in ten:
    rows.append(("cnn cluster on emulated 10 Gbit/s vs 127.0.0.1",
                 f"{ten['10gbit'] / ten['loopback']:.2f}x ({ten['10gbit']:.0f} vs {ten['loopback']:.0f} examples/s)", ">= 0.9x"))
def netem_rates(name):
    out = {}
    if os.path.exists(f"{tmp}/{name}"):
        for line in open(f"{tmp}/{name}"):
            rate, setting, eps, *_ = line.split()
            out[setting] = float(eps)
    return out
netem = netem_rates("netem.txt")
if "fp32" in netem:
    r = {s: netem[s] / netem["fp32"] for s in netem if s != "fp32"}
    rows.append(("1 Gbit/s emulated: bf16, top-k, top-k both (and fp32 without overlap) vs fp32 examples/s",
                 ", ".join(f"{s} {v:.2f}x" for s, v in r.items()), ">= 1.8x and >= 5x"))
cnn = netem_rates("netem-cnn.txt")
if "fp32" in cnn and "fp32-onepush" in cnn:
    rows.append(("1 Gbit/s emulated, cnn preset: wait-free backprop vs one push after backprop",
                 f"{cnn['fp32'] / cnn['fp32-onepush']:.2f}x ({cnn['fp32']:.0f} vs {cnn['fp32-onepush']:.0f} examples/s)", "-"))
print("| figure | this run | goal |\n|---|---|---|")
for name, value, goal in rows:
    print(f"| {name} | {value} | {goal} |")
PY
