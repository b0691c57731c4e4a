#!/usr/bin/env bash
# Checkpoints of a real cluster (checkpoint.dir) on 127.0.0.1:
#  1. a run saves every 100 steps, keeps the newest 3, and a final one before its final evaluation;
#  2. a new cluster with the same directory resumes at the newest checkpoint's global step;
#  3. a corrupt newest checkpoint is named and the previous one restored;
#  4. another model's checkpoint and bad checkpoint options are refused by name.
# Usage: checkpoint_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
ck=$tmp/ckpts
opts=(--data.dir="$tmp/data" --model.hidden=[16] --model.classes=4 --train.learning-rate=0.03 --train.max-epochs=0
      --train.patience=0 --checkpoint.dir="$ck" --checkpoint.every-steps=100)

echo "== 1: save every 100 steps, keep 3 (relative paths after -- are the caller's, as README writes them)"
(cd "$tmp" && cluster --ps 2 --workers 2 --name first --deadline 120 -- --data.dir=data --model.hidden=[16] \
   --model.classes=4 --train.learning-rate=0.03 --train.max-epochs=0 --train.patience=0 --checkpoint.dir=ckpts \
   --checkpoint.every-steps=100 --train.max-steps=500) > "$tmp/first.out" 2>&1 \
  || { fail "the first run failed:"; tail -20 "$tmp/first.out"; }
[[ ! -e "$root/ckpts" ]] || fail "checkpoint.dir=ckpts landed in the checkout ($root/ckpts), not the caller's directory"
saved=$(ls "$ck" | grep -c '^ckpt-')
echo "checkpoints kept: $(ls "$ck" | tr '\n' ' ')"
[[ $saved -eq 3 ]] || fail "expected 3 regular checkpoints, found $saved"
newest=$(ls "$ck" | grep '^ckpt-' | tail -1)
steps=$(field "$tmp/runs/first/summary.json" steps)
[[ "$newest" == "ckpt-$(printf '%012d' "$steps")" ]] || fail "the newest checkpoint $newest is not the final step $steps"
# the run's end is saved before its final evaluation (a chief lost while it finishes comes back
# at the end: integration.residual restarts such a run)
saved_at=$(grep -n "checkpoint saved: .*$newest" "$tmp/runs/first/logs/chief.log" | tail -1 | cut -d: -f1) # (the last:
# a periodic save may have written the same step first)
digest_at=$(grep -n "final weights digest" "$tmp/runs/first/logs/chief.log" | cut -d: -f1)
[[ -n "$saved_at" && -n "$digest_at" && $saved_at -lt $digest_at ]] \
  || fail "the final checkpoint (log line ${saved_at:-none}) was not written before the final evaluation (line ${digest_at:-none})"

echo "== 2: a new cluster resumes"
cluster --ps 2 --workers 2 --name second --deadline 120 -- "${opts[@]}" --train.max-steps=900 > "$tmp/second.out" 2>&1 \
  || { fail "the resumed run failed:"; tail -20 "$tmp/second.out"; }
resumed=$(field "$tmp/runs/second/summary.json" resumed_from_step)
echo "resumed from step $resumed, ended at step $(field "$tmp/runs/second/summary.json" steps)"
[[ "$resumed" == "$steps" ]] || fail "resumed from $resumed, expected $steps"
grep -q "restoring $ck/$newest: global step $steps" "$tmp/runs/second/logs/chief.log" || fail "the chief did not log the restore"
acc=$(field "$tmp/runs/second/summary.json" test_accuracy)
above "$acc" 0.6 || fail "accuracy after resuming: $acc"

echo "== 3: a corrupt newest checkpoint"
newest=$(ls "$ck" | grep '^ckpt-' | tail -1)
previous=$(ls "$ck" | grep '^ckpt-' | tail -2 | head -1)
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xff; open(p,'wb').write(b)" \
  "$ck/$newest/shard-1.bin"
cluster --ps 2 --workers 2 --name third --deadline 120 -- "${opts[@]}" --train.max-steps=1000 > "$tmp/third.out" 2>&1 \
  || { fail "the run after corruption failed:"; tail -20 "$tmp/third.out"; }
log=$tmp/runs/third/logs/chief.log
grep -q "skipping a checkpoint that does not verify: corrupt_data: $ck/$newest/shard-1.bin: checksum mismatch" "$log" \
  || fail "the corrupt checkpoint was not named"
grep -q "restoring $ck/$previous" "$log" || fail "the previous checkpoint $previous was not restored"
echo "$(grep -o 'skipping.*' "$log" | head -1)"

echo "== 4: refused"
cluster --ps 2 --workers 2 --name other --deadline 60 -- "${opts[@]}" --model.hidden=[24] --train.max-steps=100 \
  > "$tmp/other.out" 2>&1 && fail "another model's checkpoint was accepted"
grep -q "is of another model" "$tmp/other.out" || { fail "no 'another model' error:"; tail -5 "$tmp/other.out"; }
echo "$(grep -o 'checkpoint .* is of another model[^;]*' "$tmp/other.out" | head -1)"
out=$("$bin/actorps-node" --node.role=local --checkpoint.dir="$ck" --checkpoint.keep=0 2>&1); rc=$?
[[ $rc -eq 2 && "$out" == *"checkpoint.keep must be >= 1"* ]] || fail "checkpoint.keep=0: exit $rc: $out"
echo "exit $rc: ${out##*error: }"

finish
