#!/usr/bin/env bash
# make demo: start the fake internet on loopback (a topical web: sites in
# groups that link mostly among themselves, as the real web's do), crawl it
# with weaver through --connect-to, store its layout, export SQLite, DOT,
# GraphML, JSON and the map page (map.html), render an SVG when graphviz is
# installed, and stop the fake internet.
set -euo pipefail
cd "$(dirname "$0")/.."
out=demo-out
rm -rf "$out" && mkdir -p "$out"
port=${DEMO_PORT:-18088}
hosts=${DEMO_HOSTS:-300}
topics=${DEMO_TOPICS:-8}

./bin/fakeweb --listen "127.0.0.1:$port" --hosts "$hosts" --topics "$topics" --seed 1 --latency 5ms >"$out/fakeweb.log" 2>&1 &
fw=$!
trap 'kill $fw 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$out/fakeweb.log" && break; sleep 0.1; done
seed=$(./bin/fakeweb --hosts "$hosts" --topics "$topics" --seed 1 --print-seed)
echo "fake internet of $hosts hosts in $topics topics on 127.0.0.1:$port, seed $seed"

./bin/weaver crawl --db "$out/weaver.bolt" --metrics "$out/metrics.log" \
  --connect-to "::127.0.0.1:$port" --delay 100ms --max-depth 0 --quiet "$seed"
./bin/weaver status --db "$out/weaver.bolt" 2>/dev/null || true
# Communities and positions, stored once for every export below.
./bin/weaver layout --db "$out/weaver.bolt"
./bin/weaver export --db "$out/weaver.bolt" --sqlite "$out/crawler.db" --dot "$out/map.dot" \
  --graphml "$out/graph.graphml" --json "$out/graph.json" --html "$out/map.html"
echo "the map: open $out/map.html in a browser (one file, no server needed)"
if command -v dot >/dev/null; then
  # Every link: a crawl of one page per host sees each link once (weight
  # 1), so a minimum weight would leave none. The hosts stay where the
  # stored layout put them, coloured by community.
  ./bin/weaver export --db "$out/weaver.bolt" --crawled-only --dot - | dot -Tsvg -o "$out/map.svg" &&
    echo "rendered $out/map.svg: $(grep -c '<g id="node' "$out/map.svg") hosts, $(grep -c '<g id="edge' "$out/map.svg") links"
fi
if command -v sqlite3 >/dev/null; then
  echo "top 10 hosts by in-link weight:"
  sqlite3 "$out/crawler.db" "SELECT n.domain_name, SUM(e.weight) w FROM edges e JOIN nodes n ON n.node_id = e.to_node_id GROUP BY e.to_node_id ORDER BY w DESC LIMIT 10;"
fi
ls -l "$out"
