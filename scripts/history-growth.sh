#!/usr/bin/env bash
# history-growth.sh — what an unchanged revisit costs the store (issue 43,
# item 3). For each weaver binary given (default bin/weaver), in turn, RUNS
# times: crawl a fakeweb of HOSTS hosts with LINKS links a page once
# (--delay 0, otherwise the defaults), then resume it with --revisit 1s
# --revisit-max 1s --max-duration DURATION, so that every host is
# revisited, unchanged, as often as the machine allows. Prints, per run,
# the revisits, the store file's growth and that of bbolt's high-water mark
# per revisit, CPU (user+sys) per page of the revisit run, the 1-minute
# load average, and storestats' lines for the history buckets (pages,
# bytes in use, fill).
#
#   make build && scripts/history-growth.sh
#   git archive c7bbc60 | tar -x -C /tmp/before && (cd /tmp/before && go build -o weaver ./cmd/weaver)
#   RUNS=2 scripts/history-growth.sh /tmp/before/weaver bin/weaver   # alternating
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${HOSTS:-5000} links=${LINKS:-10} runs=${RUNS:-1} duration=${DURATION:-40s}
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(bin/weaver)
work=$(mktemp -d)
go build -o "$work/storestats" ./internal/tools/storestats
./bin/fakeweb --listen 127.0.0.1:0 --hosts "$hosts" --links-per-page "$links" >"$work/fakeweb.log" 2>&1 &
fw=$!
trap 'kill $fw 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q listening "$work/fakeweb.log" && break; sleep 0.1; done
read -r _ _ _ addr _ seed <"$work/fakeweb.log"
num() { grep -o "\"$1\": *[0-9]*" "$2" | tr -dc 0-9; }
hwm() { "$work/storestats" "$1" | sed -n 's/.*high-water mark \([0-9]*\) B.*/\1/p'; }
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    db=$work/h.bolt
    rm -f "$db"
    "$bin" crawl --db "$db" --metrics "$work/first.json" --connect-to "::$addr" --delay 0 --quiet "$seed" >/dev/null 2>&1
    size1=$(stat -c %s "$db") hwm1=$(hwm "$db")
    /usr/bin/time -f '%U %S' -o "$work/time" "$bin" crawl --db "$db" --metrics "$work/revisit.json" \
      --connect-to "::$addr" --delay 0 --quiet --revisit 1s --revisit-max 1s --max-duration "$duration" >/dev/null 2>&1
    read -r u s <"$work/time"
    size2=$(stat -c %s "$db") hwm2=$(hwm "$db")
    revisits=$(num revisits "$work/revisit.json") pages=$(num pages_fetched "$work/revisit.json")
    awk -v b="$bin" -v r="$run" -v n="$revisits" -v p="$pages" -v s1="$size1" -v s2="$size2" -v h1="$hwm1" -v h2="$hwm2" \
      -v u="$u" -v s="$s" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
      printf "%s run %d: %d revisits; file %.1f -> %.1f MB, %.1f B/revisit; high-water mark %.1f -> %.1f MB, %.1f B/revisit; CPU %.3f ms/page; load %s\n",
        b, r, n, s1/1e6, s2/1e6, (s2-s1)/n, h1/1e6, h2/1e6, (h2-h1)/n, (u+s)/p*1000, l }'
    "$work/storestats" "$db" | awk 'NR == 2 || $1 == "crawls" || $1 == "history" || $1 == "recent" || $1 == "nodes"'
  done
done
