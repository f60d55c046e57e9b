package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/weaver-crawler/weaver/cluster"
	"github.com/weaver-crawler/weaver/cluster/shard"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
)

// clusterSettings are the config keys that shape the graph: every shard
// of a cluster crawl must share them.
var clusterSettings = []string{"max_depth", "max_crawls_per_node", "max_subdomains_per_root", "max_outbound_links", "exclude_hosts", "ignore_robots"}

// joinCluster opens the store of a cluster shard (creating it only once
// the NATS server has been reached and agrees) and joins the cluster.
func joinCluster(ctx context.Context, e *env, cfg *crawl.Config, seeds []string, logf func(level, msg string)) (*cluster.Node, *kv.Store, error) {
	spec, err := shard.Parse(cfg.Shard)
	if err != nil {
		return nil, nil, usageError{err}
	}
	settings := map[string]string{}
	for _, k := range clusterSettings {
		v, _ := cfg.Get(k)
		settings[k] = v
	}
	var store *kv.Store
	open := func() (*kv.Store, error) {
		s, err := kv.Open(cfg.DBPath, kv.Options{})
		if err != nil {
			return nil, storeError(err)
		}
		store = s
		return s, nil
	}
	node, err := cluster.Join(ctx, cluster.Options{
		URL: cfg.Cluster, Shard: spec, Seeds: seeds, Settings: settings, Replicas: cfg.ClusterReplicas,
		Log: logf, Hook: killHook(e.Getenv("WEAVER_TEST_CLUSTER_KILL")),
	}, open)
	if err != nil {
		if store != nil {
			store.Close()
		}
		if errors.Is(err, cluster.ErrBadInput) {
			return nil, nil, usageError{err}
		}
		return nil, nil, err
	}
	return node, store, nil
}

// killHook is for the tests of what a crash costs: "STAGE:N" SIGKILLs this
// process the Nth time the publisher reaches STAGE ("read": outbox entries
// committed, not yet published; "acked": published, not yet deleted).
func killHook(spec string) func(string) {
	stage, ns, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 {
		return nil
	}
	var count atomic.Int64
	return func(s string) {
		if s == stage && count.Add(1) == int64(n) {
			fmt.Fprintf(os.Stderr, "weaver: WEAVER_TEST_CLUSTER_KILL: killed at %s #%d\n", s, n)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}

// checkNotShard refuses to run a cluster shard's store outside its
// cluster: it holds only its own hosts' frontier and stubs of the others.
func checkNotShard(store *kv.Store) error {
	var crawlName, spec string
	_ = store.View(func(tx *kv.Tx) error {
		crawlName, spec = tx.MetaString(cluster.MetaCrawl), tx.MetaString(cluster.MetaShard)
		return nil
	})
	if spec == "" {
		return nil
	}
	return usagef("%s is shard %s of cluster crawl %s: resume it with --cluster URL --shard %s (or merge the shards' stores with weaver merge)", store.Path(), spec, crawlName, spec)
}
