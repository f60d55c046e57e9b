package export

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// FormatCCHostGraph is Common Crawl's host-level graph in text form: two
// gzipped files, PREFIX-vertices.txt.gz and PREFIX-edges.txt.gz.
const FormatCCHostGraph Format = "cc-hostgraph"

// CCHostGraphFiles returns the two files CCHostGraph writes for prefix.
func CCHostGraphFiles(prefix string) (vertices, edges string) {
	return prefix + "-vertices.txt.gz", prefix + "-edges.txt.gz"
}

// ReverseHost returns host as Common Crawl's host graphs name it: the
// port dropped, a leading "www." stripped, the labels in reverse order
// (www.cam.ac.uk → uk.ac.cam). IP addresses are kept as they are.
func ReverseHost(host string) string {
	h := host
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i >= 0 {
			return h[:i+1]
		}
		return h
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return h
	}
	h = strings.TrimPrefix(h, "www.")
	labels := strings.Split(h, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".")
}

// CCHostGraph writes the graph of s, filters applied (Options; with
// Domains the vertices are registrable domains), in the text format of
// Common Crawl's host-level web graphs, which the WebGraph and
// cc-webgraph tools read:
//
//   - PREFIX-vertices.txt.gz: "id<TAB>reversed host" per line (see
//     ReverseHost), ids 0…n−1 in lexicographic (byte) order of the
//     reversed names; hosts that give one name (example.com and
//     www.example.com, or two ports of one host) are one vertex;
//   - PREFIX-edges.txt.gz: "from<TAB>to" per line, one line per pair,
//     sorted numerically, without self-loops (also those a merge of
//     hosts makes).
//
// Weights and every other attribute are left out, as in Common Crawl's
// files. It holds the names and the edges as vertex pairs in memory. Each
// file is built beside its name and renamed into place when complete;
// Stats count the vertices and edges written (Weight 0). It returns
// CheckTarget's errors for either file, the context's, the store's and
// file system errors.
func CCHostGraph(ctx context.Context, s *kv.Store, prefix string, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	// The format has no place for the layout or the ranks: neither is
	// computed (ranks only to cut the top nodes, with Top).
	opt.NoLayout, opt.NoRanks = true, true
	vpath, epath := CCHostGraphFiles(prefix)
	vtarget, err := checkTarget(s, vpath, FormatCCHostGraph, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	etarget, err := checkTarget(s, epath, FormatCCHostGraph, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	var names []string // reversed names, sorted and unique: the vertices
	// The edges as vertex ids, from<<32 | to, to be sorted: 8 bytes an
	// edge, made once at the store's edge count.
	var pairs []uint64
	_, err = walk(ctx, s, opt, func(v *view) error {
		type node struct {
			id   uint64
			name string
		}
		counts := graph.GetCounts(v.tx)
		nodes := make([]node, 0, counts.Nodes)
		if err := v.nodes(func(n *graph.Node) error {
			nodes = append(nodes, node{n.ID, ReverseHost(n.Host)})
			return nil
		}); err != nil {
			return err
		}
		names = make([]string, 0, len(nodes))
		for _, n := range nodes {
			names = append(names, n.name)
		}
		slices.Sort(names)
		names = slices.Compact(names)
		// A store's ids are dense (a counter hands them out): a vertex
		// table indexed by id, 4 bytes a node; a map for sparse ones.
		var dense []uint32
		var sparse map[uint64]uint32
		if top := len(nodes); top == 0 || nodes[top-1].id < 4*uint64(top)+1024 {
			if top > 0 {
				dense = make([]uint32, nodes[top-1].id+1)
			}
		} else {
			sparse = make(map[uint64]uint32, len(nodes))
		}
		for _, n := range nodes {
			i, _ := slices.BinarySearch(names, n.name)
			if sparse != nil {
				sparse[n.id] = uint32(i)
			} else {
				dense[n.id] = uint32(i)
			}
		}
		nodes = nil
		vertex := func(id uint64) uint32 {
			if sparse != nil {
				return sparse[id]
			}
			if id < uint64(len(dense)) {
				return dense[id]
			}
			return 0
		}
		pairs = make([]uint64, 0, counts.Edges)
		return v.edges(func(e *graph.Edge) error {
			from, to := vertex(e.From), vertex(e.To)
			if from != to {
				pairs = append(pairs, uint64(from)<<32|uint64(to))
			}
			return nil
		})
	})
	if err != nil {
		return Stats{}, wrap(FormatCCHostGraph, prefix, err)
	}
	slices.Sort(pairs)
	pairs = slices.Compact(pairs)
	err = vtarget.Write(0o644, func(tmp io.Writer) error {
		return writeGzipLines(ctx, tmp, len(names), func(b []byte, i int) []byte {
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, '\t')
			return append(b, names[i]...)
		})
	})
	if err != nil {
		return Stats{}, wrap(FormatCCHostGraph, vpath, err)
	}
	err = etarget.Write(0o644, func(tmp io.Writer) error {
		return writeGzipLines(ctx, tmp, len(pairs), func(b []byte, i int) []byte {
			b = strconv.AppendUint(b, pairs[i]>>32, 10)
			b = append(b, '\t')
			return strconv.AppendUint(b, pairs[i]&(1<<32-1), 10)
		})
	})
	if err != nil {
		return Stats{}, wrap(FormatCCHostGraph, epath, err)
	}
	return Stats{Nodes: uint64(len(names)), Edges: uint64(len(pairs))}, nil
}

// writeGzipLines writes n lines, line i made by line, gzipped, to f.
func writeGzipLines(ctx context.Context, f io.Writer, n int, line func(b []byte, i int) []byte) error {
	bw := bufio.NewWriterSize(f, 256<<10)
	zw := gzip.NewWriter(bw)
	var b []byte
	for i := range n {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b = append(line(b[:0], i), '\n')
		if _, err := zw.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return ctx.Err()
}
