package export

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/rank"
)

// Ranked is a node of an export's graph with its ranks: a row of
// `weaver rank`.
type Ranked struct {
	ID       uint64  `json:"id"`
	Host     string  `json:"host"` // the registrable domain with Options.Domains
	PageRank float64 `json:"pagerank"`
	Harmonic float64 `json:"harmonic"`
	InWeight uint64  `json:"in_weight"` // sum of the weights of the edges pointing at it
	Title    string  `json:"title,omitempty"`
}

// RankList is the top of an export's graph by PageRank.
type RankList struct {
	Nodes          uint64   `json:"nodes"`
	Edges          uint64   `json:"edges"`
	Domains        bool     `json:"domains"`
	HarmonicMethod string   `json:"harmonic_method"` // "exact", or "hyperball, ..." for estimates
	Top            []Ranked `json:"top"`             // by PageRank, highest first; ties in id order
}

// Top returns the n nodes of s's graph seen through opt (the graph an
// export with opt writes) with the highest PageRank, every node when n is
// 0, with their harmonic centrality, in-weight and title. It reads the
// store in one read transaction. Options.NoRanks is ignored. It returns
// the store's, rank's or the context's error.
func Top(ctx context.Context, s *kv.Store, opt Options, n int) (RankList, error) {
	opt = opt.withDefaults()
	opt.NoRanks = false
	opt.NoLayout = true
	var list RankList
	err := s.View(func(tx *kv.Tx) error {
		v, err := newView(ctx, tx, opt)
		if err != nil {
			return err
		}
		vr, r := v.ranks, v.ranks.r
		nodes := len(vr.ids)
		list = RankList{Nodes: uint64(nodes), Edges: uint64(vr.edges), Domains: opt.Domains, HarmonicMethod: string(r.HarmonicMethod)}
		if n <= 0 {
			n = nodes
		}
		in := vr.inWeight
		top := rank.Top(r.PageRank, n)
		list.Top = make([]Ranked, len(top))
		at := map[uint64]int{} // id → position in list.Top
		for k, i := range top {
			id := vr.ids[i]
			list.Top[k] = Ranked{ID: id, PageRank: r.PageRank[i], Harmonic: r.Harmonic[i], InWeight: in[i]}
			at[id] = k
		}
		if v.domains == nil && len(top) < nodes/64 {
			// A few hosts: read them, not every node.
			for k := range list.Top {
				node, ok, err := graph.Get(tx, list.Top[k].ID)
				if err != nil {
					return err
				}
				if ok {
					list.Top[k].Host, list.Top[k].Title = node.Host, node.Title
				}
			}
			return nil
		}
		return v.nodes(func(node *graph.Node) error {
			if k, ok := at[node.ID]; ok {
				list.Top[k].Host, list.Top[k].Title = node.Host, node.Title
			}
			return nil
		})
	})
	if err != nil {
		return RankList{}, fmt.Errorf("export: rank: %w", err)
	}
	return list, nil
}

// TopFromJSON is Top for a graph in the JSON export's form (JSON's
// output, or GET /graph of a running crawl), read from r as a stream: the
// ranks are those the file gives its nodes. It returns a decoding error
// for anything but such a file, or one without ranks.
func TopFromJSON(r io.Reader, n int) (RankList, error) {
	fail := func(err error) (RankList, error) {
		return RankList{}, fmt.Errorf("export: rank: reading JSON: %w", err)
	}
	dec := json.NewDecoder(r)
	var list RankList
	var ids []uint64
	var nodes []Ranked
	var pageranks []float64
	pos := map[uint64]int{}
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		switch key {
		case "graph":
			var g jsonGraph
			if err := dec.Decode(&g); err != nil {
				return fail(err)
			}
			list.Domains, list.HarmonicMethod = g.Domains, g.HarmonicMethod
		case "nodes":
			if err := expectDelim(dec, '['); err != nil {
				return fail(err)
			}
			for dec.More() {
				var jn jsonNode
				if err := dec.Decode(&jn); err != nil {
					return fail(err)
				}
				if jn.PageRank == nil || jn.Harmonic == nil {
					return fail(fmt.Errorf("node %d has no ranks", jn.ID))
				}
				pos[jn.ID] = len(nodes)
				ids = append(ids, jn.ID)
				pageranks = append(pageranks, *jn.PageRank)
				nodes = append(nodes, Ranked{ID: jn.ID, Host: jn.Host, Title: jn.Title, PageRank: *jn.PageRank, Harmonic: *jn.Harmonic})
			}
			if err := expectDelim(dec, ']'); err != nil {
				return fail(err)
			}
		case "edges":
			if err := expectDelim(dec, '['); err != nil {
				return fail(err)
			}
			for dec.More() {
				var je jsonEdge
				if err := dec.Decode(&je); err != nil {
					return fail(err)
				}
				i, ok := pos[je.Target]
				if !ok {
					return fail(fmt.Errorf("edge %d → %d: no node %d before the edges", je.Source, je.Target, je.Target))
				}
				nodes[i].InWeight += je.Weight
				list.Edges++
			}
			if err := expectDelim(dec, ']'); err != nil {
				return fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	// Nodes come in id order; order them so whatever the source did.
	if !slices.IsSorted(ids) {
		slices.SortFunc(nodes, func(a, b Ranked) int { return cmp.Compare(a.ID, b.ID) })
		for i := range nodes {
			pageranks[i] = nodes[i].PageRank
		}
	}
	list.Nodes = uint64(len(nodes))
	if n <= 0 {
		n = len(nodes)
	}
	for _, i := range rank.Top(pageranks, n) {
		list.Top = append(list.Top, nodes[i])
	}
	if list.Top == nil {
		list.Top = []Ranked{}
	}
	return list, nil
}

// expectDelim reads the next token and checks that it is the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("found %v where %v was expected", t, d)
	}
	return nil
}
