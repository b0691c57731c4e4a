#!/usr/bin/env bash
# Variables shared across sessions (train.scope on node.keep-alive ps nodes, TF's resource
# containers), with real processes on 127.0.0.1: two ps nodes outlive every session below.
#  1. session 1 trains scope problem_1 for 100 sync steps; session 2 in the same scope starts
#     from its values and version (global step 100 -> 200); session 3 in scope problem_2 starts
#     fresh on the same ps nodes;
#  2. a session whose model does not fit problem_1's variables is refused, naming the variable
#     and both shapes;
#  3. two sessions in scopes c1 and c2 at the same time end with the same weights as the same
#     sessions one after the other (scopes s1, s2; sync, seeded);
#  4. node.role = scopes lists every scope with its phase, variables, bytes and version, drops
#     one, and names a scope it does not hold.
# Usage: scopes_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
read -r -a port <<< "$(free_ports 8)"
# cluster files: the same two ps nodes; sessions a and b have their own chief and workers
for s in a b; do
  [[ $s == a ]] && o=2 || o=5
  cat > "$tmp/$s.ini" <<INI
[cluster]
chief = "127.0.0.1:${port[$o]}"
ps = ["127.0.0.1:${port[0]}", "127.0.0.1:${port[1]}"]
workers = ["127.0.0.1:$((port[o + 1]))", "127.0.0.1:$((port[o + 2]))"]
connect-timeout = 20s
[train]
mode = "sync"
INI
done
common=(--data.dir="$tmp/data" --model.hidden=[16,12] --model.classes=4 --train.learning-rate=0.1 --train.seed=7
        --train.max-epochs=0 --train.patience=0 --train.run-dir="$tmp/runs")
pids=()
for i in 0 1; do
  "$bin/actorps-node" --config-file="$tmp/a.ini" --node.role=ps --node.index=$i --node.keep-alive \
    > "$tmp/ps-$i.log" 2>&1 &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT

# session CLUSTER NAME SCOPE [options]: the chief and 2 workers of one session; fails unless all exit 0
session() {
  local ini=$1 name=$2 scope=$3 rc=0 w
  shift 3
  local ws=()
  for w in 0 1; do
    "$bin/actorps-node" --config-file="$tmp/$ini.ini" --node.role=worker --node.index=$w --train.scope="\"$scope\"" \
      --train.name="$name" "${common[@]}" "$@" > "$tmp/$name-worker-$w.log" 2>&1 &
    ws+=($!)
  done
  "$bin/actorps-node" --config-file="$tmp/$ini.ini" --node.role=chief --train.scope="\"$scope\"" --train.name="$name" \
    "${common[@]}" "$@" > "$tmp/$name-chief.log" 2>&1 || rc=$?
  [[ $rc -ne 0 ]] && kill -TERM "${ws[@]}" 2>/dev/null # (a failed chief: its workers would wait out connect-timeout)
  for w in "${ws[@]}"; do wait "$w" || rc=$?; done
  return $rc
}
digest() { field "$tmp/runs/$1/summary.json" weights_digest 2>/dev/null; }
scopes() { "$bin/actorps-node" --config-file="$tmp/a.ini" --node.role=scopes --node.index="$1" "${@:2}" 2>&1; }

echo "== 1: sessions 1 and 2 in scope problem_1, session 3 in problem_2"
session a s1 problem_1 --train.max-steps=100 || { fail "session 1 failed"; tail -5 "$tmp/s1-chief.log"; }
session a s2 problem_1 --train.max-steps=200 || { fail "session 2 failed"; tail -5 "$tmp/s2-chief.log"; }
session a s3 problem_2 --train.max-steps=100 || { fail "session 3 failed"; tail -5 "$tmp/s3-chief.log"; }
for s in s1 s2 s3; do
  echo "$s: global step $(field "$tmp/runs/$s/summary.json" global_step), attached at $(field "$tmp/runs/$s/summary.json" attached_at_step), test accuracy $(field "$tmp/runs/$s/summary.json" test_accuracy)"
done
[[ "$(field "$tmp/runs/s1/summary.json" attached_at_step)" == -1 ]] || fail "session 1 did not start fresh"
[[ "$(field "$tmp/runs/s2/summary.json" attached_at_step)" == 100 ]] || fail "session 2 did not continue at step 100"
[[ "$(field "$tmp/runs/s2/summary.json" global_step)" == 200 ]] || fail "session 2 did not end at global step 200"
[[ "$(field "$tmp/runs/s3/summary.json" attached_at_step)" == -1 ]] || fail "session 3 (another scope) did not start fresh"
grep -q "continuing at global step 100" "$tmp/s2-chief.log" || fail "session 2's chief did not log continuing"
grep -q "was already initialised (version 100" "$tmp/s2-chief.log" || fail "session 2 did not find version 100"
grep -q 'scope "problem_1": session ended' "$tmp/ps-0.log" || fail "ps 0 did not log the end of problem_1's session"
# session 2 continued session 1's values: its first evaluation is session 1's last model, not a fresh one
s1_final=$(field "$tmp/runs/s1/summary.json" final_test_accuracy)
echo "session 1 ended at test accuracy $s1_final"

echo "== 2: another model in problem_1"
session a bad problem_1 --model.hidden=[24,12] --train.max-steps=300 && fail "a session of another model was accepted"
grep -q 'scope "problem_1" does not match this session: dense0/weights is 16x16 here, but 16x24 in this session' "$tmp/bad-chief.log" \
  || { fail "the mismatch was not named:"; tail -3 "$tmp/bad-chief.log"; }
echo "$(grep -o 'scope "problem_1" does not match[^;]*' "$tmp/bad-chief.log" | head -1)"

echo "== 3: two scopes at once, and one after the other"
session a seq1 s1 --train.max-steps=150 || fail "sequential session s1 failed"
session a seq2 s2 --train.max-steps=150 --train.seed=8 || fail "sequential session s2 failed"
session a con1 c1 --train.max-steps=150 & one=$!
session b con2 c2 --train.max-steps=150 --train.seed=8 || fail "concurrent session c2 failed"
wait $one || fail "concurrent session c1 failed"
same_weights seq1 con1 "scope c1 beside c2"
same_weights seq2 con2 "scope c2 beside c1"
[[ "$(digest seq1)" != "$(digest seq2)" ]] || fail "the two seeds gave the same weights (the check would prove nothing)"

echo "== 4: list and drop"
list=$(scopes 0); echo "$list"
for s in problem_1 problem_2 s1 s2 c1 c2; do
  grep -q "^\"$s\" *kept" <<< "$list" || fail "ps 0 does not list scope $s as kept"
done
grep -Eq '^"problem_1" +kept +[0-9]+ +[0-9]+ +200$' <<< "$list" || fail "problem_1 is not at version 200"
out=$(scopes 0 --node.drop-scope='"problem_2"'); echo "$out"
[[ "$out" == *'dropped "problem_2"'* ]] || fail "problem_2 was not dropped"
scopes 0 | grep -q problem_2 && fail "problem_2 is still listed after the drop"
out=$(scopes 1 --node.drop-scope='"nothing"'); rc=$?
echo "exit $rc: ${out##*error: }"
[[ $rc -ne 0 && "$out" == *'unknown_scope: shard 1 holds no scope "nothing"'* ]] || fail "dropping an unknown scope: exit $rc: $out"
for i in 0 1; do kill -0 "${pids[$i]}" 2>/dev/null || fail "ps $i did not outlive the sessions"; done

finish
