#!/usr/bin/env bash
# profile-links.sh — the page shape of issue 28: fakeweb home pages of about
# 30 KB with 40 cross-host links on average, zero latency, 3 workers,
# robots.txt off, fsync on. Crawls HOSTS hosts with WEAVER (default
# bin/weaver) keeping every link (--max-outbound-links 0) and keeping 10,
# prints CPU (user+sys, from /usr/bin/time) per page and per extra link,
# the store's bytes per edge and bucket by bucket, and leaves CPU profiles
# and allocation profiles in OUT (go tool pprof -top bin/weaver
# OUT/crawl-all.cpu; go tool pprof -sample_index=alloc_space -top bin/weaver
# OUT/crawl-all.mem).
#
#   scripts/profile-links.sh                     # 10,000 hosts into /tmp/weaver-prof
#   HOSTS=20000 PAGES_PER_HOST=10 scripts/profile-links.sh
#   WARC=1 scripts/profile-links.sh              # the same with --warc, and an import of it
#   HOSTS=200000 MAX_PAGES=10000 scripts/profile-links.sh  # 10,000 pages of a web still being discovered
set -euo pipefail
WEAVER=${WEAVER:-bin/weaver}
FAKEWEB=${FAKEWEB:-bin/fakeweb}
STATS=${STATS:-}
HOSTS=${HOSTS:-10000}
LINKS=${LINKS:-40}
PPH=${PAGES_PER_HOST:-1}
MAX_PAGES=${MAX_PAGES:-0}
OUT=${OUT:-/tmp/weaver-prof}
KEEP=${KEEP:-all 10}
mkdir -p "$OUT"
if [ -z "$STATS" ]; then
  STATS="$OUT/storestats"
  go build -o "$STATS" ./internal/tools/storestats
fi

"$FAKEWEB" --listen 127.0.0.1:0 --hosts "$HOSTS" --links-per-page "$LINKS" >"$OUT/fakeweb.out" 2>&1 &
FW=$!
trap 'kill $FW 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/fakeweb.out" 2>/dev/null && break; sleep 0.1; done
read -r _ _ _ ADDR _ SEED <"$OUT/fakeweb.out"

crawl() { # name, extra flags...
  local name=$1; shift
  rm -f "$OUT/$name.bolt" "$OUT/$name.json"; rm -rf "$OUT/$name.warc"
  WEAVER_CPUPROFILE="$OUT/$name.cpu" WEAVER_MEMPROFILE="$OUT/$name.mem" /usr/bin/time -f '%U %S %e %M' -o "$OUT/$name.time" \
    "$WEAVER" crawl --db "$OUT/$name.bolt" --metrics "$OUT/$name.json" --connect-to "::$ADDR" \
    --delay 0 --max-depth 0 --max-crawls-per-node 1 --workers 3 --quiet --ignore-robots \
    --pages-per-host "$PPH" --max-pages "$MAX_PAGES" "$@" "$SEED"
  read -r u s wall rss <"$OUT/$name.time"
  pages=$(grep -o '"pages_fetched": *[0-9]*' "$OUT/$name.json" | tr -dc 0-9)
  edges=$(grep -o '"total_edges": *[0-9]*' "$OUT/$name.json" | tr -dc 0-9)
  size=$(stat -c %s "$OUT/$name.bolt")
  awk -v n="$name" -v u="$u" -v s="$s" -v w="$wall" -v p="$pages" -v e="$edges" -v z="$size" -v r="$rss" 'BEGIN {
    printf "%-10s %6d pages %8d edges  CPU %.2f s (%.3f ms/page)  wall %.1f s  %.1f B/edge  peak RSS %d MiB\n",
      n, p, e, u+s, (u+s)/p*1000, w, z/e, r/1024 }'
  echo "$u $s $pages $edges" >"$OUT/$name.sum"
}

for k in $KEEP; do
  m=$k; [ "$k" = all ] && m=0
  crawl "crawl-$k" --max-outbound-links "$m"
done
"$STATS" "$OUT/crawl-${KEEP%% *}.bolt"
if [ -f "$OUT/crawl-all.sum" ] && [ -f "$OUT/crawl-10.sum" ]; then
  read -r u1 s1 p1 e1 <"$OUT/crawl-all.sum"; read -r u2 s2 p2 e2 <"$OUT/crawl-10.sum"
  awk -v a="$u1 $s1 $e1" -v b="$u2 $s2 $e2" 'BEGIN { split(a,x," "); split(b,y," ");
    printf "CPU per extra stored link: %.1f µs\n", ((x[1]+x[2])-(y[1]+y[2]))/(x[3]-y[3])*1e6 }'
fi
if [ -n "${WARC:-}" ]; then
  crawl crawl-warc --max-outbound-links 0 --warc "$OUT/crawl-warc.warc"
  read -r u1 s1 _ <"$OUT/crawl-all.sum"; read -r u2 s2 _ <"$OUT/crawl-warc.sum"
  awk -v a="$u1 $s1" -v b="$u2 $s2" 'BEGIN { split(a,x," "); split(b,y," "); printf "--warc CPU: %.2f× the crawl without\n", (y[1]+y[2])/(x[1]+x[2]) }'
  rm -f "$OUT/import.bolt"
  WEAVER_CPUPROFILE="$OUT/import.cpu" /usr/bin/time -f '%U %S %e %M' -o "$OUT/import.time" \
    "$WEAVER" import --quiet --max-outbound-links 0 --db "$OUT/import.bolt" "$OUT/crawl-warc.warc"
  read -r u s wall rss <"$OUT/import.time"
  mb=$(du -cb "$OUT"/crawl-warc.warc/* | tail -1 | cut -f1)
  read -r _ _ p _ <"$OUT/crawl-warc.sum"
  awk -v u="$u" -v s="$s" -v w="$wall" -v p="$p" -v mb="$mb" 'BEGIN {
    printf "import: CPU %.2f s (%.3f ms/page), wall %.1f s, %.1f MB/s of WARC over wall time\n", u+s, (u+s)/p*1000, w, mb/w/1e6 }'
fi
