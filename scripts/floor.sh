#!/usr/bin/env bash
# floor.sh — weaver's CPU per page against the floor under it, measured
# side by side (docs/performance.md#close-to-the-floor). It serves the
# fake web of `make profile-links` (30 KB home pages, 40 links to other
# hosts on average), crawls it once to learn which hosts a crawl fetches,
# then runs, ROUNDS times and in turn: weaver keeping every link
# (WEAVER), OLD when set (another weaver binary, e.g. one built from
# main), and fetchfloor on the same hosts with the tokenizer, with
# weaver's byte scanner (--scan) and without parsing (--no-parse). Every
# run's CPU is user+sys from /usr/bin/time; each round gives a ratio to
# weaver's run of the same round, and the script prints each command's
# median CPU per page and the median and spread of its ratios. A shared
# machine's speed drifts: only ratios taken in one round mean something.
#
#   scripts/floor.sh                                  # 10,000 hosts, the whole web
#   HOSTS=200000 MAX_PAGES=10000 scripts/floor.sh     # 10,000 pages of a web still being discovered
#   OLD=/tmp/weaver-main ROUNDS=7 scripts/floor.sh
#   WARC=1 scripts/floor.sh                           # weaver --warc against weaver without
set -euo pipefail
WEAVER=${WEAVER:-bin/weaver}
FAKEWEB=${FAKEWEB:-bin/fakeweb}
OLD=${OLD:-}
HOSTS=${HOSTS:-10000}
MAX_PAGES=${MAX_PAGES:-0}
ROUNDS=${ROUNDS:-5}
OUT=${OUT:-/tmp/weaver-floor}
mkdir -p "$OUT"
go build -o "$OUT/fetchfloor" ./internal/tools/fetchfloor

"$FAKEWEB" --listen 127.0.0.1:0 --hosts "$HOSTS" --links-per-page 40 >"$OUT/fakeweb.out" 2>&1 &
FW=$!
trap 'kill $FW 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/fakeweb.out" 2>/dev/null && break; sleep 0.1; done
read -r _ _ _ ADDR _ SEED <"$OUT/fakeweb.out"

crawl() { # binary, name, extra flags...
  local bin=$1 name=$2; shift 2
  rm -f "$OUT/$name.bolt"; rm -rf "$OUT/$name.warc"
  "$bin" crawl --db "$OUT/$name.bolt" --metrics "$OUT/$name.json" --connect-to "::$ADDR" --delay 0 --max-depth 0 --max-crawls-per-node 1 \
    --workers 3 --quiet --ignore-robots --max-outbound-links 0 --max-pages "$MAX_PAGES" "$@" "$SEED" 2>/dev/null
}
crawl "$WEAVER" list
"$OUT/fetchfloor" --list-crawled "$OUT/list.bolt" >"$OUT/hosts"
PAGES=$(wc -l <"$OUT/hosts")

declare -a NAMES CMDS
add() { NAMES+=("$1"); CMDS+=("$2"); }
add weaver "crawl $WEAVER new"
if [ -n "${WARC:-}" ]; then add "weaver --warc" "crawl $WEAVER warc --warc $OUT/warc.warc"; fi
if [ -n "$OLD" ]; then add old "crawl $OLD old"; fi
add tokenizer-floor "$OUT/fetchfloor --connect-to $ADDR $OUT/hosts"
add scan-floor "$OUT/fetchfloor --scan --connect-to $ADDR $OUT/hosts"
add fetch-alone "$OUT/fetchfloor --no-parse --connect-to $ADDR $OUT/hosts"

: >"$OUT/cpu"
for r in $(seq "$ROUNDS"); do
  for i in "${!NAMES[@]}"; do
    /usr/bin/time -f '%U %S' -o "$OUT/time" bash -c "$(declare -f crawl); OUT=$OUT ADDR=$ADDR SEED=$SEED MAX_PAGES=$MAX_PAGES; ${CMDS[$i]}" >/dev/null
    read -r u s <"$OUT/time"
    echo "$r $i $u $s" >>"$OUT/cpu"
  done
  echo "round $r of $ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

# med FILE: "median min max" of the numbers in FILE, one a line.
med() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

echo "$PAGES pages, $ROUNDS rounds; CPU per page (median of the runs) and ratio to weaver's run of the same round (median, min-max):"
for i in "${!NAMES[@]}"; do
  awk -v i="$i" -v pages="$PAGES" '$2 == i { print ($3 + $4) / pages * 1000 }' "$OUT/cpu" >"$OUT/per-page"
  awk -v i="$i" '$2 == 0 { w[$1] = $3 + $4 } $2 == i { c[$1] = $3 + $4 } END { for (r in c) print w[r] / c[r] }' "$OUT/cpu" >"$OUT/ratio"
  read -r cm _ _ < <(med "$OUT/per-page")
  read -r rm rlo rhi < <(med "$OUT/ratio")
  printf "%-16s %s ms/page   weaver / this: %s (%s-%s)\n" "${NAMES[$i]}" "$cm" "$rm" "$rlo" "$rhi"
done
