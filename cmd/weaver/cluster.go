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
	"text/tabwriter"
	"time"

	"github.com/weaver-crawler/weaver/cluster"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// joinCluster opens the store of a cluster shard (creating it only once
// the NATS server has been reached and agrees) and joins the cluster.
func joinCluster(ctx context.Context, e *env, cfg *crawl.Config, seeds []string, logf func(level, msg string)) (*cluster.Node, *kv.Store, error) {
	spec, err := shard.Parse(cfg.Shard)
	if err != nil {
		return nil, nil, usageError{err: err}
	}
	settings := map[string]string{}
	// Every shard must share the settings that shape the graph.
	for _, k := range crawl.GraphKeys {
		v, _ := cfg.Get(k)
		settings[k] = v
	}
	_, statErr := os.Stat(cfg.DBPath)
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
		URL: cfg.Cluster, Shard: spec, Seeds: seeds, Name: cfg.CrawlName, NewStore: os.IsNotExist(statErr), Settings: settings, Replicas: cfg.ClusterReplicas,
		Log: logf, Hook: killHook(e.Getenv("WEAVER_TEST_CLUSTER_KILL")),
	}, open)
	if err != nil {
		if store != nil {
			store.Close()
		}
		if errors.Is(err, cluster.ErrBadInput) {
			return nil, nil, usageError{err: err}
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
	err := store.View(func(tx *kv.Tx) error {
		crawlName, spec = tx.MetaString(cluster.MetaCrawl), tx.MetaString(cluster.MetaShard)
		return nil
	})
	if err != nil {
		// Fails closed: a store that cannot say it is not a shard is not
		// crawled as if it were not.
		return fmt.Errorf("%s: reading whether it is a cluster shard's store: %w", store.Path(), err)
	}
	if spec == "" {
		return nil
	}
	return usagef("%s is shard %s of cluster crawl %s: resume it with --cluster URL --shard %s (or merge the shards' stores with weaver merge)", store.Path(), spec, crawlName, spec)
}

// clusterStatus prints what the NATS server at url knows of its cluster
// crawls: each shard's state, and the totals.
func clusterStatus(ctx context.Context, e *env, url, name string, asJSON bool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reps, err := cluster.ReadStatus(ctx, url, name)
	if errors.Is(err, cluster.ErrBadInput) {
		return usageError{err: err}
	}
	if err != nil {
		return err
	}
	if asJSON {
		if reps == nil {
			reps = []cluster.Report{}
		}
		return writeJSON(e.Stdout, reps)
	}
	if len(reps) == 0 {
		fmt.Fprintf(e.Stdout, "No cluster crawl on %s.\n", cluster.Redact(url))
		return nil
	}
	now := time.Now()
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(e.Stdout)
		}
		state := fmt.Sprintf("running: %d idle, %d busy, %d not started", r.Idle, r.Busy, r.Shards-r.Idle-r.Busy)
		if r.Complete {
			state = "complete: every shard idle, every link delivered"
		}
		fmt.Fprintf(e.Stdout, "Cluster crawl %s on %s: %s, %s\n", r.Crawl, cluster.Redact(url), count(r.Shards, "shard", ""), state)
		if len(r.Seeds) > 0 {
			fmt.Fprintf(e.Stdout, "Seeds: %s\n", strings.Join(r.Seeds, " "))
		}
		tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SHARD\tSTATE\tQUEUE\tLEASES\tOUTBOX\tSENT\tRECEIVED\tNODES\tEDGES\tHOST\tUPDATED")
		for k, st := range r.States {
			if st == nil {
				fmt.Fprintf(tw, "shard %d/%d\tnot started\t\t\t\t\t\t\t\t\t\n", k, r.Shards)
				continue
			}
			s := "busy"
			if st.Idle {
				s = "idle"
			}
			fmt.Fprintf(tw, "shard %d/%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s ago\n", k, r.Shards, s, st.Queue, st.Leases, st.Outbox,
				st.Sent, st.Received, st.Nodes, st.Edges, fmt.Sprintf("%s[%d]", st.Host, st.PID), now.Sub(st.Updated).Round(time.Second))
		}
		tw.Flush()
		fmt.Fprintf(e.Stdout, "Totals: queue %d, outbox %d, links sent %d, received %d, in the stream %d; %s and %s in the shards' stores (weaver merge joins them)\n",
			r.Queue, r.Outbox, r.Sent, r.Received, r.Pending, count(r.Nodes, "node", ""), count(r.Edges, "edge", ""))
	}
	return nil
}
