#!/usr/bin/env bash
# A crawl's pages/s with and without a slow client downloading /snapshot
# (issue 14, item 3). For each weaver binary given (default bin/weaver), it
# crawls a zero-latency fakeweb of $HOSTS hosts $RUNS times without a
# download and $RUNS times while curl reads /snapshot at $RATE/s, one
# download after another, for the whole crawl (from 1 s in, so the store
# is MBs long and keeps growing), and prints pages/s from the metrics file
# with the 1-minute load average.
#
#   make build && scripts/slowreader.sh
#   git archive 7b66341 | tar -x -C /tmp/before && (cd /tmp/before && go build -o weaver ./cmd/weaver)
#   scripts/slowreader.sh /tmp/before/weaver bin/weaver     # before the spool fix, then after
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${HOSTS:-20000} runs=${RUNS:-3} rate=${RATE:-10k} workers=${WORKERS:-3}
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(bin/weaver)
work=$(mktemp -d)
fwlog=$work/fakeweb.log
./bin/fakeweb --listen 127.0.0.1:0 --hosts "$hosts" --seed 1 --robots-disallow-every -1 --crawl-delay-every -1 >"$fwlog" 2>&1 &
fw=$!
dl=""
cleanup() {
  [ -n "$dl" ] && kill "$dl" 2>/dev/null || true
  kill "$fw" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 100); do grep -q listening "$fwlog" && break; sleep 0.1; done
addr=$(awk '/listening on/ {print $4; exit}' "$fwlog")
seed=$(./bin/fakeweb --hosts "$hosts" --seed 1 --print-seed)

# download loops over /snapshot at $rate until killed.
download() {
  local db=$1
  for _ in $(seq 200); do [ -s "$db.listen" ] && break; sleep 0.05; done
  sleep 1
  local api
  api=$(cat "$db.listen")
  while :; do
    curl -sf --limit-rate "$rate" -o /dev/null "http://$api/snapshot" &
    echo $! >"$work/curl.pid"
    wait $! || break
  done
}

printf '%-28s %-9s %4s %10s %8s %6s\n' binary download run pages/s pages load1
for bin in "${bins[@]}"; do
  for run in $(seq "$runs"); do
    for mode in none "$rate/s"; do
      db=$work/crawl.bolt
      rm -f "$db" "$db.metrics"
      load=$(cut -d' ' -f1 /proc/loadavg)
      "$bin" crawl --db "$db" --metrics "$db.metrics" --connect-to "::$addr" --delay 0 --max-depth 0 \
        --max-crawls-per-node 1 --workers "$workers" --quiet --ignore-robots --listen 127.0.0.1:0 "$seed" >"$work/crawl.log" 2>&1 &
      crawl=$!
      dl=""
      if [ "$mode" != none ]; then
        download "$db" &
        dl=$!
      fi
      wait "$crawl"
      if [ -n "$dl" ]; then
        kill "$dl" 2>/dev/null || true # the loop, then its curl
        kill "$(cat "$work/curl.pid" 2>/dev/null)" 2>/dev/null || true
        wait "$dl" 2>/dev/null || true
        dl=""
      fi
      printf '%-28s %-9s %4s %10.0f %8s %6s\n' "$bin" "$mode" "$run" \
        "$(jq -s 'last.pages_per_second' "$db.metrics")" "$(jq -s 'last.pages_fetched' "$db.metrics")" "$load"
    done
  done
done
