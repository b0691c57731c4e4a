#!/usr/bin/env bash
# Prometheus scrapes a running local cluster (issue 35): scripts/local-cluster.sh --metrics gives
# every node a /metrics port and writes prometheus.yml; Debian's prometheus server, started here on
# 127.0.0.1 with that file, must show actorps_global_step rising through its HTTP query API, and
# every node's target must be up, an elastic joiner's too once it joins (file-based discovery),
# and promtool's check must pass on every node's page (HELP lines, base units: issue 50, item 7).
# Everything started here is stopped here, also on failure.
# Usage: prometheus_test.sh REPO_ROOT BIN_DIR
source "$(dirname "$0")/lib.sh" "$@"
command -v prometheus > /dev/null || { echo "prometheus is not installed (scripts/install-deps.sh installs it)"; exit 1; }

prom_pid="" launcher=""
stop_all() {
  [[ -n "$prom_pid" ]] && kill "$prom_pid" 2> /dev/null && wait "$prom_pid" 2> /dev/null
  [[ -n "$launcher" ]] && kill "$launcher" 2> /dev/null && wait "$launcher" 2> /dev/null
  rm -rf "$tmp"
}
trap stop_all EXIT

python3 "$root/tests/integration/make_quadrants.py" "$tmp/data"
cluster --metrics --ps 1 --workers 2 --name scraped --deadline 120 -- --data.dir="$tmp/data" --model.hidden=[16] \
  --model.classes=4 --train.max-epochs=0 --train.max-steps=0 --train.max-seconds=30 --train.patience=0 \
  --train.eval-every-epochs=0 --train.eval-every=5000 --cluster.elastic --cluster.max-workers=4 \
  > "$tmp/cluster.out" 2>&1 &
launcher=$!
for _ in $(seq 1 100); do [[ -s "$tmp/runs/scraped/prometheus.yml" ]] && break; sleep 0.1; done
[[ -s "$tmp/runs/scraped/prometheus.yml" ]] || { fail "no prometheus.yml"; finish; exit; }
cat "$tmp/runs/scraped/metrics-ports"
port=$(free_port)
prometheus --config.file="$tmp/runs/scraped/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$port" > "$tmp/prometheus.log" 2>&1 &
prom_pid=$!

# query EXPR: the values of an instant query, one per line ("" while none)
query() {
  python3 - "http://127.0.0.1:$port/api/v1/query" "$1" <<'PY' 2> /dev/null
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
for r in json.load(urllib.request.urlopen(url, timeout=5))["data"]["result"]:
    print(r["value"][1])
PY
}
first="" last=""
for _ in $(seq 1 30); do
  v=$(query 'actorps_global_step{role="chief"}' | head -n 1)
  [[ -n "$v" && -z "$first" ]] && first=$v
  last=$v
  [[ -n "$first" && -n "$last" ]] && above "$last" "$first" && break
  sleep 1
done
echo "actorps_global_step through Prometheus: first $first, then $last"
[[ -n "$first" ]] || { fail "Prometheus never saw actorps_global_step"; tail -5 "$tmp/prometheus.log"; }
[[ -n "$first" && -n "$last" ]] && { above "$last" "$first" || fail "actorps_global_step did not rise ($first, then $last)"; }
up=$(query 'sum(up{job="actorps"})')
echo "targets up: $up of 4"
[[ "$up" == "4" ]] || fail "not every node's target is up ($up of 4)"
"$root/scripts/cluster-ctl.sh" "$tmp/runs/scraped" add
for _ in $(seq 1 30); do [[ "$(query 'sum(up{job="actorps"})')" == "5" ]] && break; sleep 1; done
up=$(query 'sum(up{job="actorps"})')
echo "targets up after a worker joined: $up of 5"
[[ "$up" == "5" ]] || fail "the joiner's target is not up ($up of 5)"
for m in 'actorps_shard_updates_total' 'actorps_worker_steps_total' 'actorps_step_compute_seconds' 'actorps_worker_seen_global_step'; do
  [[ -n "$(query "$m")" ]] || fail "Prometheus has no $m"
done
# Prometheus' own linter on every node's page: HELP lines, base units, counters' _total
command -v promtool > /dev/null || fail "promtool is not installed (Debian's prometheus package has it)"
while read -r node node_port; do
  python3 -c "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())" \
    "http://127.0.0.1:$node_port/metrics" > "$tmp/page-$node.txt" || { fail "no /metrics page from $node"; continue; }
  if promtool check metrics < "$tmp/page-$node.txt" > "$tmp/lint-$node.txt" 2>&1; then
    echo "promtool check metrics: $node passes ($(grep -c '^# HELP' "$tmp/page-$node.txt") metrics)"
  else
    fail "promtool check metrics on $node: $(head -5 "$tmp/lint-$node.txt" | tr '\n' ';')"
  fi
done < "$tmp/runs/scraped/metrics-ports"
chief_port=$(awk '$1 == "chief" {print $2}' "$tmp/runs/scraped/metrics-ports")
python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=5)" "http://127.0.0.1:$chief_port/" 2> "$tmp/404.txt" \
  && fail "a path other than /metrics was answered"
grep -q "404" "$tmp/404.txt" || fail "a path other than /metrics did not get 404"
end_run scraped # (its 30 s only outlast the checks)
wait "$launcher" || fail "the cluster failed"
launcher=""
finish
