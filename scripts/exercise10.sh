#!/usr/bin/env bash
# Exercise 10: on the same data and the same wall-clock budget, trains the single-process
# baseline, async, sync, sync with one backup worker, in-graph sync, ssp and model-parallel --
# each cluster a real multi-process local cluster -- then the same async cluster for a fixed
# number of epochs with 1, 2 and 3 workers, and writes runs/<name>/report.md (+ accuracy.png).
#
#   scripts/exercise10.sh [--preset NAME] [--budget SECONDS] [--target ACCURACY] [--epochs N]
#                         [--notebook [--max-epochs N]] [--name NAME] [--run-dir DIR] [--bin DIR]
#                         [-- options for every run]
#
# --preset reference: the model of every run (reference, seed-sigmoid, softmax, cnn, cifar10-tutorial,
# resnet20 or xception-mini, with its own training defaults; a model with conv layers skips the
# model-parallel run, which splits dense layers only); --budget 60: training seconds per mode; --target 0.88: the validation accuracy
# whose first crossing is "time to target"; --epochs 3: the epochs of the 1/2/3-worker runs.
# --notebook: train every mode as the exercise-10 notebook did instead of for a budget: evaluate
# every 5 epochs, stop after 6 evaluations without a lower validation loss, keep the best model,
# no time limit (--max-epochs 1000 at most); the report says so.
# Options after -- go to every run (e.g. --data.dir=... --model.hidden=[...] for another data set,
# such as an MNIST-format directory).
set -euo pipefail
cd "$(dirname "$0")/.."
caller=$OLDPWD
absolute() { [[ "$1" = /* ]] && echo "$1" || echo "$caller/$1"; }

budget=60 target=0.88 epochs=3 name="" run_dir=runs bin=build/bin preset=reference notebook=false max_epochs=1000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset) preset=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --notebook) notebook=true; shift ;;
    --max-epochs) max_epochs=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --run-dir) run_dir=$(absolute "$2"); shift 2 ;;
    --bin) bin=$(absolute "$2"); shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "exercise10: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
extra=(--model.preset="\"$preset\"" "$@")
[[ -n "$name" ]] || name=exercise10-$(date +%Y%m%d-%H%M%S)
out=$run_dir/$name
[[ -x "$bin/actorps-node" && -x "$bin/actorps-train" ]] || { echo "exercise10: no binaries in $bin (run scripts/build.sh)" >&2; exit 1; }
command -v gnuplot > /dev/null || { echo "exercise10: gnuplot is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
mkdir -p "$out"
[[ -z "$(ls -A "$out")" ]] || { echo "exercise10: $out is not empty; choose another --name" >&2; exit 1; }

# Every timed run: the budget, no other stop, an evaluation every 500 steps; with --notebook the
# notebook's early stopping instead (the notebook's numbers: every 5 epochs, patience 6).
if [[ $notebook == true ]]; then
  [[ "$max_epochs" =~ ^[1-9][0-9]*$ ]] || { echo "exercise10: --max-epochs must be a positive number, got '$max_epochs'" >&2; exit 2; }
  timed=(--train.max-seconds=0.0 --train.max-epochs="$max_epochs" --train.eval-every-epochs=5 --train.patience=6
         --train.early-stopping-metric='"validation-loss"' --train.eval-every=0 --train.progress-every=1000000000)
  report_how=(notebook 5 6 "$max_epochs")
else
  timed=(--train.max-seconds="$budget.0" --train.max-epochs=0 --train.patience=0 --train.eval-every=500
         --train.progress-every=1000000000)
  report_how=()
fi
log=$out/exercise10.log
run() { # run LABEL COMMAND...: one run, its output in $out/LABEL.out; failures are reported, not fatal
  local label=$1
  shift
  echo "exercise10: $label ..." | tee -a "$log"
  if "$@" > "$out/$label.out" 2>&1; then
    grep -hE "^(mode=|test_accuracy=)" "$out/$label.out" | tee -a "$log" || true
  else
    echo "exercise10: $label FAILED (exit $?); see $out/$label.out" | tee -a "$log"
  fi
}
cluster() { scripts/local-cluster.sh --run-dir "$out" --bin "$bin" "$@"; }

if [[ $notebook == true ]]; then
  echo "exercise10: preset $preset, the notebook's early stopping (every 5 epochs, patience 6, at most $max_epochs epochs), target validation accuracy $target, results in $out" | tee "$log"
else
  echo "exercise10: preset $preset, $budget s per mode, target validation accuracy $target, results in $out" | tee "$log"
fi
run single "$bin/actorps-train" --train.run-dir="$out" --train.name=single "${timed[@]}" "${extra[@]}"
run async cluster --mode async --ps 2 --workers 2 --name async -- "${timed[@]}" "${extra[@]}"
run sync cluster --mode sync --ps 2 --workers 2 --name sync -- "${timed[@]}" "${extra[@]}"
run sync-backup cluster --mode sync --ps 2 --workers 3 --name sync-backup -- "${timed[@]}" \
  --train.replicas-to-aggregate=2 "${extra[@]}"
run in-graph cluster --mode sync --ps 2 --workers 2 --name in-graph -- "${timed[@]}" --train.replication='"in-graph"' \
  "${extra[@]}"
run ssp cluster --mode ssp --ps 2 --workers 2 --name ssp -- "${timed[@]}" --train.staleness=2 "${extra[@]}"
if refusal=$("$bin/actorps-node" --node.role=local --train.mode=model-parallel --train.slices=2 \
                "${extra[@]}" --node.check-only 2>&1); then
  run model-parallel cluster --mode model-parallel --ps 2 --workers 2 --name model-parallel -- "${timed[@]}" \
    --train.slices=2 "${extra[@]}"
else
  mkdir -p "$out/model-parallel"
  echo "${refusal##*error: }" > "$out/model-parallel/skipped"
  echo "exercise10: model-parallel skipped: $(cat "$out/model-parallel/skipped")" | tee -a "$log"
fi
for w in 1 2 3; do
  run "epochs-$w" cluster --mode async --ps 2 --workers "$w" --name "epochs-$w" -- --train.max-epochs="$epochs" \
    --train.patience=0 --train.progress-every=1000000000 "${extra[@]}"
done

python3 scripts/exercise10_report.py "$out" "$budget" "$target" "$epochs" "${report_how[@]}"
echo "exercise10: report $out/report.md, plot $out/accuracy.png"
