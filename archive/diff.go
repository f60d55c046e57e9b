package archive

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// DiffOptions control Diff.
type DiffOptions struct {
	// Domains compares registrable domains instead of hosts: a domain's
	// edges are the summed weights of its hosts' edges to other domains
	// (edges inside one domain are left out, as in export's Domains).
	// Node changes are not reported at this level.
	Domains bool
}

// EdgeChange is an edge that appeared (OldWeight 0), vanished (NewWeight
// 0) or changed weight or link facts (nofollow, redirect, frame).
type EdgeChange struct {
	From        string `json:"from"`
	To          string `json:"to"`
	OldWeight   uint64 `json:"old_weight"`
	NewWeight   uint64 `json:"new_weight"`
	Delta       int64  `json:"delta"`
	OldNofollow uint64 `json:"old_nofollow"`
	NewNofollow uint64 `json:"new_nofollow"`
	OldRedirect uint64 `json:"old_redirect"`
	NewRedirect uint64 `json:"new_redirect"`
	OldFrame    uint64 `json:"old_frame"`
	NewFrame    uint64 `json:"new_frame"`
}

// NodeChange is a host present in both stores whose status, title,
// canonical URL, robots directives or mirror group (the host it copies)
// changed.
type NodeChange struct {
	Host         string       `json:"host"`
	OldStatus    graph.Status `json:"old_status"`
	NewStatus    graph.Status `json:"new_status"`
	OldTitle     string       `json:"old_title"`
	NewTitle     string       `json:"new_title"`
	OldCanonical string       `json:"old_canonical,omitempty"`
	NewCanonical string       `json:"new_canonical,omitempty"`
	OldRobots    string       `json:"old_robots,omitempty"`
	NewRobots    string       `json:"new_robots,omitempty"`
	OldMirrorOf  string       `json:"old_mirror_of,omitempty"` // host; "" when no copy
	NewMirrorOf  string       `json:"new_mirror_of,omitempty"`
}

// Report is what changed from an older store to a newer one. Every list is
// sorted by host names.
type Report struct {
	Level        string       `json:"level"` // "host" or "domain"
	Added        []string     `json:"added"`
	Removed      []string     `json:"removed"`
	EdgesAdded   []EdgeChange `json:"edges_added"`
	EdgesRemoved []EdgeChange `json:"edges_removed"`
	EdgesChanged []EdgeChange `json:"edges_changed"`
	NodesChanged []NodeChange `json:"nodes_changed"`
}

// Empty reports whether the report lists no change.
func (r *Report) Empty() bool {
	return len(r.Added)+len(r.Removed)+len(r.EdgesAdded)+len(r.EdgesRemoved)+len(r.EdgesChanged)+len(r.NodesChanged) == 0
}

func newReport(level string) *Report {
	return &Report{Level: level, Added: []string{}, Removed: []string{}, EdgesAdded: []EdgeChange{},
		EdgesRemoved: []EdgeChange{}, EdgesChanged: []EdgeChange{}, NodesChanged: []NodeChange{}}
}

// Diff compares the store before with the store after, each in one read
// transaction. At host level it keeps two id maps (8 bytes per node) and
// the changes in memory; at domain level the two collapsed domain graphs. It returns a decoding error for a
// damaged store, or ctx's error.
func Diff(ctx context.Context, before, after *kv.Store, opt DiffOptions) (*Report, error) {
	var r *Report
	err := before.View(func(otx *kv.Tx) error {
		return after.View(func(ntx *kv.Tx) error {
			var err error
			if opt.Domains {
				r, err = diffDomains(ctx, otx, ntx)
			} else {
				r, err = diffHosts(ctx, otx, ntx)
			}
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	sortReport(r)
	return r, nil
}

// every is how many records a walk handles between checks of its context.
const every = 4096

// matchNodes walks from's nodes, looking each host up in to: it fills the
// id map from → to (0 when the host is absent) and calls fn for each node
// with its counterpart, if any.
func matchNodes(ctx context.Context, from, to *kv.Tx, fn func(n, other *graph.Node) error) (idMap, error) {
	var ids idMap
	ids.limit = 4*graph.GetCounts(from).Nodes + 1<<20
	count := 0
	err := graph.ForEachNode(from, func(n *graph.Node) error {
		if count++; count%every == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		other, ok, err := graph.GetByHost(to, n.Host)
		if err != nil {
			return err
		}
		if !ok {
			ids.set(n.ID, 0)
			return fn(n, nil)
		}
		ids.set(n.ID, other.ID)
		return fn(n, &other)
	})
	return ids, err
}

// mirrorHost returns the host a mirror copy copies, "" for none.
func mirrorHost(tx *kv.Tx, id uint64) (string, error) {
	if id == 0 {
		return "", nil
	}
	n, _, err := graph.Get(tx, id)
	return n.Host, err
}

func diffHosts(ctx context.Context, otx, ntx *kv.Tx) (*Report, error) {
	r := newReport("host")
	newToOld, err := matchNodes(ctx, ntx, otx, func(n, o *graph.Node) error {
		if o == nil {
			r.Added = append(r.Added, n.Host)
			return nil
		}
		om, err := mirrorHost(otx, o.MirrorOf)
		if err != nil {
			return err
		}
		nm, err := mirrorHost(ntx, n.MirrorOf)
		if err != nil {
			return err
		}
		if o.Status != n.Status || o.Title != n.Title || o.Canonical != n.Canonical || o.RobotsDirectives != n.RobotsDirectives || om != nm {
			r.NodesChanged = append(r.NodesChanged, NodeChange{Host: n.Host,
				OldStatus: o.Status, NewStatus: n.Status, OldTitle: o.Title, NewTitle: n.Title,
				OldCanonical: o.Canonical, NewCanonical: n.Canonical, OldRobots: o.RobotsDirectives, NewRobots: n.RobotsDirectives,
				OldMirrorOf: om, NewMirrorOf: nm})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	oldToNew, err := matchNodes(ctx, otx, ntx, func(o, n *graph.Node) error {
		if n == nil {
			r.Removed = append(r.Removed, o.Host)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	hostOf := func(tx *kv.Tx, id uint64) (string, error) {
		n, ok, err := graph.Get(tx, id)
		if err == nil && !ok {
			err = fmt.Errorf("archive: diff: edge names missing node %d: %w", id, graph.ErrInconsistent)
		}
		return n.Host, err
	}
	hosts := func(tx *kv.Tx, e *graph.Edge) (from, to string, err error) {
		if from, err = hostOf(tx, e.From); err == nil {
			to, err = hostOf(tx, e.To)
		}
		return from, to, err
	}
	count := 0
	err = graph.ForEachEdge(ntx, func(e *graph.Edge) error {
		if count++; count%every == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var o graph.Edge
		if from, to := newToOld.get(e.From), newToOld.get(e.To); from != 0 && to != 0 {
			var err error
			if o, _, err = graph.GetEdge(otx, from, to); err != nil {
				return err
			}
		}
		if o.Weight == e.Weight && o.Nofollow == e.Nofollow && o.Redirect == e.Redirect && o.Frame == e.Frame {
			return nil
		}
		from, to, err := hosts(ntx, e)
		if err != nil {
			return err
		}
		c := EdgeChange{From: from, To: to, OldWeight: o.Weight, NewWeight: e.Weight, Delta: int64(e.Weight) - int64(o.Weight),
			OldNofollow: o.Nofollow, NewNofollow: e.Nofollow, OldRedirect: o.Redirect, NewRedirect: e.Redirect,
			OldFrame: o.Frame, NewFrame: e.Frame}
		if o.Weight == 0 {
			r.EdgesAdded = append(r.EdgesAdded, c)
		} else {
			r.EdgesChanged = append(r.EdgesChanged, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = graph.ForEachEdge(otx, func(e *graph.Edge) error {
		if count++; count%every == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if from, to := oldToNew.get(e.From), oldToNew.get(e.To); from != 0 && to != 0 {
			_, ok, err := graph.GetEdge(ntx, from, to)
			if err != nil || ok {
				return err
			}
		}
		from, to, err := hosts(otx, e)
		r.EdgesRemoved = append(r.EdgesRemoved, EdgeChange{From: from, To: to, OldWeight: e.Weight, Delta: -int64(e.Weight),
			OldNofollow: e.Nofollow, OldRedirect: e.Redirect})
		return err
	})
	return r, err
}

// domainGraph is a store collapsed to registrable domains.
type domainGraph struct {
	domains map[string]bool
	edges   map[[2]string]uint64
}

func collapse(ctx context.Context, tx *kv.Tx) (*domainGraph, error) {
	g := &domainGraph{domains: map[string]bool{}, edges: map[[2]string]uint64{}}
	var dom []string // node id → domain
	count := 0
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		if count++; count%every == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		d := n.Domain
		if d == "" {
			d = graph.RegistrableDomain(n.Host)
		}
		g.domains[d] = true
		for uint64(len(dom)) <= n.ID {
			dom = append(dom, "")
		}
		dom[n.ID] = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	at := func(id uint64) string {
		if id < uint64(len(dom)) {
			return dom[id]
		}
		return ""
	}
	err = graph.ForEachEdge(tx, func(e *graph.Edge) error {
		if count++; count%every == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		from, to := at(e.From), at(e.To)
		if from == "" || to == "" || from == to {
			return nil
		}
		g.edges[[2]string{from, to}] += e.Weight
		return nil
	})
	return g, err
}

func diffDomains(ctx context.Context, otx, ntx *kv.Tx) (*Report, error) {
	og, err := collapse(ctx, otx)
	if err != nil {
		return nil, err
	}
	ng, err := collapse(ctx, ntx)
	if err != nil {
		return nil, err
	}
	r := newReport("domain")
	for d := range ng.domains {
		if !og.domains[d] {
			r.Added = append(r.Added, d)
		}
	}
	for d := range og.domains {
		if !ng.domains[d] {
			r.Removed = append(r.Removed, d)
		}
	}
	for k, w := range ng.edges {
		o := og.edges[k]
		c := EdgeChange{From: k[0], To: k[1], OldWeight: o, NewWeight: w, Delta: int64(w) - int64(o)}
		switch {
		case o == 0:
			r.EdgesAdded = append(r.EdgesAdded, c)
		case o != w:
			r.EdgesChanged = append(r.EdgesChanged, c)
		}
	}
	for k, o := range og.edges {
		if _, ok := ng.edges[k]; !ok {
			r.EdgesRemoved = append(r.EdgesRemoved, EdgeChange{From: k[0], To: k[1], OldWeight: o, Delta: -int64(o)})
		}
	}
	return r, nil
}

func sortReport(r *Report) {
	slices.Sort(r.Added)
	slices.Sort(r.Removed)
	byHosts := func(a, b EdgeChange) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) }
	slices.SortFunc(r.EdgesAdded, byHosts)
	slices.SortFunc(r.EdgesRemoved, byHosts)
	slices.SortFunc(r.EdgesChanged, byHosts)
	slices.SortFunc(r.NodesChanged, func(a, b NodeChange) int { return cmp.Compare(a.Host, b.Host) })
}
