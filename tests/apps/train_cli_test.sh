#!/usr/bin/env bash
# Startup errors of actorps-train: each bad input is named and exits non-zero; nothing is written.
# Usage: train_cli_test.sh path/to/actorps-train
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# only_log_lines_before_error <output>: whether the output is log lines ("[   1.234s] tag: ...")
# followed by one "error: ..." line, nothing else (no line of a library's in front of the error,
# such as OpenBLAS's kernel choice on a CPU it does not know: that goes in the log)
only_log_lines_before_error() {
  local body last
  last=$(tail -n 1 <<< "$1")
  body=$(head -n -1 <<< "$1")
  [[ "$last" == "error: "* ]] || return 1
  [[ -z "$body" ]] || ! grep -qvE '^\[ *[0-9]+\.[0-9]+s\] [^:]+: ' <<< "$body"
}

# expect_error <expected exit code> <text the error must contain> <args...>
expect_error() {
  local want_rc=$1 want=$2
  shift 2
  local out rc
  out=$("$bin" --train.run-dir="$tmp/runs" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want_rc ]] || [[ "$out" != *"$want"* ]] || ! only_log_lines_before_error "$out"; then
    echo "FAIL: $* -> exit $rc (want $want_rc), output: $out (want: $want)"
    failures=$((failures + 1))
  else
    echo "ok: $* -> exit $rc: ${out##*error: }"
  fi
}

expect_error 2 "unknown option '--train.batch-sise'; did you mean '--train.batch-size'?" --train.batch-sise=10
expect_error 2 "option '--train.batch-size' expects an integer, got 'abc'" --train.batch-size=abc
expect_error 2 "unexpected argument 'extra'" extra
expect_error 2 "train.batch-size must be > 0" --train.batch-size=-1
expect_error 2 "compute.device must be auto, cpu or gpu" --compute.device='"tpu"'
expect_error 2 "model.activation must be one of relu, elu, sigmoid, tanh, leaky-relu" --model.activation='"swish"'

printf '[train]\nbatch-sise=10\n' > "$tmp/unknown.ini"
expect_error 2 "$tmp/unknown.ini: unknown key 'train.batch-sise'" --config-file="$tmp/unknown.ini"
printf '[train]\nlearning-rate="fast"\n' > "$tmp/type.ini"
expect_error 2 "$tmp/type.ini: key 'train.learning-rate' expects a real number, got \"fast\"" --config-file="$tmp/type.ini"
expect_error 2 "error: config file $tmp/missing.ini: cannot open it (No such file or directory)" --config-file="$tmp/missing.ini"

# a bad configuration found after the options parse (model.init-from) exits 2 too, as README says
expect_error 2 "model.init-from $tmp/nothere: no such file or directory" --model.init-from="\"$tmp/nothere\""
/usr/bin/python3 -c 'import numpy as np, sys; np.savez(sys.argv[1], **{"dense0/weights": np.zeros((3, 3), np.float32)})' \
  "$tmp/small.npz"
expect_error 2 "model.init-from $tmp/small.npz: dense0/weights has shape 3x3, this model's is 784x160" \
  --model.init-from="\"$tmp/small.npz\""
expect_error 1 "$tmp/nodata: holds neither MNIST-format IDX files" --data.dir="\"$tmp/nodata\""
mkdir -p "$tmp/bad"
printf 'garbage' > "$tmp/bad/train-images-idx3-ubyte"
printf 'garbage' > "$tmp/bad/train-labels-idx1-ubyte"
expect_error 1 "$tmp/bad/train-images-idx3-ubyte: wrong magic" --data.dir="\"$tmp/bad\""

# a run folder another process holds (flock on its .lock) is refused first: one line, nothing loaded
mkdir -p "$tmp/held/busy"
# (its sleep gets no stdout: a sleep left holding the test's output kept ctest waiting 30 s)
flock "$tmp/held/busy/.lock" sleep 30 > /dev/null 2>&1 &
holder=$!
sleep 0.3
out=$("$bin" --train.run-dir="$tmp/held" --train.name=busy 2>&1); rc=$?
pkill -P "$holder" 2>/dev/null
kill "$holder" 2>/dev/null
if [[ $rc -ne 1 || "$out" != "error: file_error: $tmp/held/busy is in use by another running process"* || $(wc -l <<< "$out") -ne 1 ]]; then
  echo "FAIL: a run folder in use -> exit $rc, output: $out (want one line, exit 1)"
  failures=$((failures + 1))
else
  echo "ok: a run folder in use -> exit $rc: ${out##*error: }"
fi

expect_error 2 "option '--train.tensorboard' expects true or false, got 'no'" --train.tensorboard=no
# a batch no machine holds is refused before anything is loaded, naming the figure (issue 50, item 19)
expect_error 2 "this configuration needs at least" --train.batch-size=1000000000

if [[ -e "$tmp/runs" ]]; then
  echo "FAIL: a failed start created $tmp/runs"
  failures=$((failures + 1))
fi
# a boolean that is on by default is turned off on the command line as in a file: =false (and
# =true, a flag's other spelling, is taken too)
for value in false true; do
  out=$("$bin" --train.run-dir="$tmp/ok" --train.name="tb-$value" --train.max-steps=5 --train.max-epochs=0 \
        --train.tensorboard="$value" 2>&1); rc=$?
  written=$([[ -d "$tmp/ok/tb-$value/tensorboard" ]] && echo true || echo false)
  if [[ $rc -ne 0 || $written != "$value" ]]; then
    echo "FAIL: --train.tensorboard=$value -> exit $rc, event folder written: $written; output: $(tail -c 300 <<< "$out")"
    failures=$((failures + 1))
  else
    echo "ok: --train.tensorboard=$value -> event folder written: $written"
  fi
done

# a run that diverges ends with the error naming it and exit 1, not a summary of a broken model
# (issue 50, item 4: train.learning-rate = 1 reached loss 2.4e21 at 10% accuracy and exited 0)
out=$("$bin" --train.run-dir="$tmp/ok" --train.name=diverged --train.learning-rate=1 --train.max-steps=2000 \
      --train.max-epochs=0 2>&1); rc=$?
if [[ $rc -ne 1 || $(tail -n 1 <<< "$out") != "error: non_finite: training diverged at step "*"; lower train.learning-rate" ]] \
   || ! only_log_lines_before_error "$out"; then
  echo "FAIL: train.learning-rate=1 -> exit $rc, output: $(tail -c 400 <<< "$out") (want the divergence named, exit 1)"
  failures=$((failures + 1))
else
  echo "ok: train.learning-rate=1 -> exit $rc: $(tail -n 1 <<< "$out")"
fi

# A process that restarted itself for OpenBLAS's kernels (as on a CPU that OpenBLAS 0.3.21 does
# not know, with no OPENBLAS_CORETYPE set) inherits ACTORPS_BLAS_RESTART: its error is still
# the one line, and a run says it once in its log, never on the answer's stdout.
out=$(ACTORPS_BLAS_RESTART=Haswell "$bin" --train.batch-sise=10 2>&1); rc=$?
if [[ $rc -ne 2 || $(wc -l <<< "$out") -ne 1 || "$out" != "error: "* ]]; then
  echo "FAIL: a restarted process's bad option -> exit $rc, output: $out (want one error line, exit 2)"
  failures=$((failures + 1))
else
  echo "ok: a restarted process's bad option -> one line"
fi
ACTORPS_BLAS_RESTART=Haswell "$bin" --train.run-dir="$tmp/ok" --train.name=restarted --train.max-steps=5 \
  --train.max-epochs=0 > "$tmp/restarted.out" 2> "$tmp/restarted.err"; rc=$?
said=$(grep -c "restarted with OPENBLAS_CORETYPE=" "$tmp/restarted.err")
strays=$(grep -cvE '^\[ *[0-9]+\.[0-9]+s\] [^:]+: ' "$tmp/restarted.err")
if [[ $rc -ne 0 || $said -ne 1 || $strays -ne 0 || $(wc -l < "$tmp/restarted.out") -ne 1 ]] \
   || ! grep -q '^test_accuracy=' "$tmp/restarted.out"; then
  echo "FAIL: a restarted run -> exit $rc, the note $said time(s) (want 1), $strays stray line(s) in its log;" \
       "stdout: $(cat "$tmp/restarted.out"); log: $(tail -c 600 "$tmp/restarted.err")"
  failures=$((failures + 1))
else
  echo "ok: a restarted run says so once in its log: $(grep -o 'OpenBLAS chose.*' "$tmp/restarted.err")"
fi

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
