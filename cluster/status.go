package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Report is what the NATS server knows of one cluster crawl.
type Report struct {
	Crawl    string            `json:"crawl"`
	Shards   int               `json:"shards"`
	Seeds    []string          `json:"seeds,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// States holds each shard's last published state; nil for a shard
	// that has not started.
	States []*State `json:"states"`
	// Pending is the links in the stream not yet applied by their shard.
	Pending uint64 `json:"pending"`
	// Idle and Busy count the shards; Complete is the quiescence test
	// (every shard idle, as many links received as sent, nothing pending).
	Idle     int    `json:"idle"`
	Busy     int    `json:"busy"`
	Complete bool   `json:"complete"`
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	Queue    uint64 `json:"queue"`
	Outbox   uint64 `json:"outbox"`
	Nodes    uint64 `json:"nodes"` // summed over shards: a host another shard links to counts again as a stub
	Edges    uint64 `json:"edges"`
}

// ReadStatus reports the cluster crawls on the NATS server at url: the
// one named crawlName, or every one when it is "". It writes nothing. An
// unreachable server wraps ErrBadInput.
func ReadStatus(ctx context.Context, url, crawlName string) ([]Report, error) {
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second), nats.Name("weaver status"))
	if err != nil {
		return nil, badInput("cannot reach the NATS server at %s: %v", Redact(url), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	var names []string
	if crawlName != "" {
		names = []string{crawlName}
	} else {
		l := js.KeyValueStoreNames(ctx)
		for b := range l.Name() {
			if n, ok := strings.CutPrefix(b, "weaver_"); ok {
				names = append(names, n)
			}
		}
		if err := l.Error(); err != nil {
			return nil, fmt.Errorf("cluster: list KV buckets: %w", err)
		}
		slices.Sort(names)
	}
	var out []Report
	for _, name := range names {
		r, err := readReport(ctx, js, name)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func readReport(ctx context.Context, js jetstream.JetStream, name string) (Report, error) {
	r := Report{Crawl: name}
	kvb, err := js.KeyValue(ctx, bucketName(name))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return r, badInput("no cluster crawl %s on this server", name)
	}
	if err != nil {
		return r, err
	}
	e, err := kvb.Get(ctx, configKey)
	if err != nil {
		return r, fmt.Errorf("cluster: crawl %s's configuration: %w", name, err)
	}
	var cfg clusterConfig
	if err := json.Unmarshal(e.Value(), &cfg); err != nil {
		return r, fmt.Errorf("cluster: crawl %s's configuration: %w", name, err)
	}
	r.Shards, r.Seeds, r.Settings = cfg.Shards, cfg.Seeds, cfg.Settings
	r.States = make([]*State, cfg.Shards)
	for k := range cfg.Shards {
		e, err := kvb.Get(ctx, stateKey(k))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return r, err
		}
		var st State
		if json.Unmarshal(e.Value(), &st) != nil {
			continue
		}
		r.States[k] = &st
		if st.Idle {
			r.Idle++
		} else {
			r.Busy++
		}
		r.Sent += st.Sent
		r.Received += st.Received
		r.Queue += st.Queue
		r.Outbox += st.Outbox
		r.Nodes += st.Nodes
		r.Edges += st.Edges
	}
	if s, err := js.Stream(ctx, streamName(name)); err == nil {
		if info, err := s.Info(ctx); err == nil {
			r.Pending = info.State.Msgs
		}
	}
	r.Complete = r.Idle == r.Shards && r.Sent == r.Received && r.Pending == 0
	return r, nil
}
