#!/usr/bin/env bash
# make demo-cluster: a cluster crawl on this machine, offline. A NATS
# server with JetStream (the Go module's own binary, `go tool nats-server`),
# the fake internet, three weaver shards; then weaver status --cluster,
# weaver merge of the shards' stores, and the exports of the merged store.
set -euo pipefail
cd "$(dirname "$0")/.."
out=demo-cluster-out
rm -rf "$out" && mkdir -p "$out"
port=${DEMO_PORT:-18089}
nport=${DEMO_NATS_PORT:-14223}
hosts=${DEMO_HOSTS:-600}
GO=${GO:-go}

$GO build -o bin/nats-server github.com/nats-io/nats-server/v2
./bin/nats-server -js -sd "$out/nats" -a 127.0.0.1 -p "$nport" >"$out/nats.log" 2>&1 &
ns=$!
./bin/fakeweb --listen "127.0.0.1:$port" --hosts "$hosts" --seed 1 --latency 20ms >"$out/fakeweb.log" 2>&1 &
fw=$!
trap 'kill $fw $ns 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$out/fakeweb.log" && grep -q "Server is ready" "$out/nats.log" && break; sleep 0.1; done
seed=$(./bin/fakeweb --hosts "$hosts" --seed 1 --print-seed)
nats="nats://127.0.0.1:$nport"
echo "NATS JetStream on $nats; fake internet of $hosts hosts on 127.0.0.1:$port, seed $seed"

pids=()
for k in 0 1 2; do
  ./bin/weaver crawl --cluster "$nats" --shard "$k/3" --db "$out/s$k.bolt" --metrics "$out/s$k.metrics.log" \
    --connect-to "::127.0.0.1:$port" --delay 100ms --max-depth 0 --quiet "$seed" >"$out/s$k.log" 2>&1 &
  pids+=($!)
done
sleep 2
./bin/weaver status --cluster "$nats" || true
for p in "${pids[@]}"; do wait "$p"; done
tail -n 2 "$out"/s?.log
./bin/weaver status --cluster "$nats"
./bin/weaver merge -o "$out/weaver.bolt" "$out/s0.bolt" "$out/s1.bolt" "$out/s2.bolt"
./bin/weaver export --db "$out/weaver.bolt" --sqlite "$out/crawler.db" --graphml "$out/graph.graphml" \
  --json "$out/graph.json" --html "$out/map.html"
./bin/weaver rank --db "$out/weaver.bolt" --top 5
ls -l "$out"
