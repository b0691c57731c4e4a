#!/usr/bin/env bash
# TLS clusters (security.tls) on 127.0.0.1, each node with its own certificate of one cluster CA:
#  1. a TLS cluster (2 shards x 2 workers) trains on Fashion-MNIST and every listener is TLS;
#  2. kill -9 one of three workers: the others and the shards keep their connections
#     (CAF's openssl module used to close healthy connections too: node/openssl_error_queue.cpp);
#  3. bad TLS settings are refused before anything connects, naming the key and file.
# Refused intruders (anonymous, self-signed, other CA, plain TCP) are in tests/node/connect_test.cpp.
# Usage: tls_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"

echo "== 1: TLS cluster, 2 shards x 2 workers, 300 steps"
if cluster --tls --ps 2 --workers 2 --name tls --deadline 300 -- --train.max-steps=300 > "$tmp/tls.out" 2>&1; then
  acc=$(field "$tmp/runs/tls/summary.json" test_accuracy)
  echo "test accuracy $acc"
  above "$acc" 0.7 || fail "accuracy $acc is not > 0.7"
  for node in chief ps-0 ps-1; do
    grep -q "listening at .* (TLS)" "$tmp/runs/tls/logs/$node.log" || fail "$node did not listen with TLS"
  done
else
  fail "the TLS cluster failed:"; tail -20 "$tmp/tls.out"
fi

echo "== 2: kill -9 one worker of three in a TLS cluster"
cluster --tls --workers 3 --name kill --deadline 180 --tolerate worker-2 -- --train.max-seconds=6.0 \
  --train.max-epochs=0 --train.patience=0 > "$tmp/kill.out" 2>&1 &
cpid=$!
victim=$(kill_when_training kill worker-2)
[[ -n "$victim" ]] && echo "killed worker-2 (pid $victim)" || fail "training never started"
if wait "$cpid"; then
  lost=$(field "$tmp/runs/kill/summary.json" workers_lost)
  echo "workers lost: $lost"
  [[ "$lost" == "1" ]] || { fail "lost $lost workers, not 1:"; grep "went down" "$tmp/runs/kill/logs/chief.log"; }
else
  fail "the cluster failed after the kill:"; grep -h "went down\|error" "$tmp/kill.out" | head -5
fi

echo "== 3: bad TLS settings"
certs=$tmp/runs/tls/certs
expect_refusal() { # expect_refusal TEXT OPTION...: exit 2 and TEXT in the error
  local text=$1 out rc
  shift
  out=$("$bin/actorps-node" --node.role=ps --cluster.ps='["127.0.0.1:4250"]' --cluster.workers='["127.0.0.1:4260"]' \
          --cluster.chief=127.0.0.1:4240 "$@" 2>&1); rc=$?
  echo "exit $rc: ${out##*error: }"
  [[ $rc -eq 2 && "$out" == *"$text"* ]] || fail "expected exit 2 naming '$text', got $rc: $out"
}
expect_refusal "openssl.certificate" --security.tls
expect_refusal "/nonexistent/ps.pem" --security.tls --openssl.certificate=/nonexistent/ps.pem \
  --openssl.key="$certs/ps-0.key" --openssl.cafile="$certs/ca.pem"
expect_refusal "openssl.cafile" --openssl.cafile="$certs/ca.pem"
# Issue 11, item 6: files that CAF accepted and then crashed on (a worker threw, a shard aborted
# on its first connection): a key of another certificate, a certificate file that is not PEM.
expect_refusal "does not belong to the certificate" --security.tls --openssl.certificate="$certs/ps-0.pem" \
  --openssl.key="$certs/worker-0.key" --openssl.cafile="$certs/ca.pem"
head -c 300 /dev/urandom > "$tmp/garbage.pem"
expect_refusal "$tmp/garbage.pem\", which is not a PEM certificate" --security.tls \
  --openssl.certificate="$tmp/garbage.pem" --openssl.key="$certs/ps-0.key" --openssl.cafile="$certs/ca.pem"
expect_refusal "openssl.cafile names \"$tmp/garbage.pem\", which holds no PEM certificate" --security.tls \
  --openssl.certificate="$certs/ps-0.pem" --openssl.key="$certs/ps-0.key" --openssl.cafile="$tmp/garbage.pem"

finish
