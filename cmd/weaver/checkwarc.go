package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// maxWarcDiffs is how many edges that differ weaver check --warc lists.
const maxWarcDiffs = 20

// warcFile is one of a crawl's WARC files in the directory checked.
type warcFile struct {
	path   string // as it is in the directory
	name   string // its final name (without .open)
	serial int
	open   bool // NAME.open: left by a crawl that did not close it
}

// checkWarcDir is weaver check --warc DIR: whether the crawl's WARC files
// in dir agree with the store. Every page the store holds has its
// response record where its node says (checkWarcRefs); the files end
// where the store's last commit ended (meta warc.end): no record past it,
// no file after it — records of pages whose commit did not happen, which
// the next crawl on the store cuts; and, when an import can say it, the
// files imported into a new store give the store's graph weight for
// weight. It returns the problems and notes (what was not compared).
func checkWarcDir(ctx context.Context, s *kv.Store, dir string) (problems, notes []string, err error) {
	var prefix string
	var settings crawl.Settings
	err = s.View(func(tx *kv.Tx) error {
		prefix = tx.MetaString(crawlwarc.MetaPrefix)
		settings, _ = crawl.ReadSettings(tx)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if prefix == "" {
		prefix = crawlwarc.Prefix(&crawl.Config{DBPath: s.Path()})
	}
	problems = checkWarcRefs(s, dir)
	files, err := crawlFiles(dir, prefix)
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return append(problems, fmt.Sprintf("warc: no WARC file of the crawl %s in %s", prefix, dir)), nil, nil
	}
	end, err := crawlwarc.End(s)
	if err != nil {
		return nil, nil, err
	}
	inputs, tmp, more := committedParts(files, end)
	defer os.RemoveAll(tmp)
	problems = append(problems, more...)
	robots, err := checkWarcRobots(s, inputs)
	if err != nil {
		return nil, nil, err
	}
	problems = append(problems, robots...)
	cfg := crawl.Defaults()
	if settings != nil {
		if err := cfg.Apply(settings, "the store's settings"); err != nil {
			return nil, nil, err
		}
	}
	recrawled := false // read only where it decides: a walk of every node
	if cfg.Render == crawl.RenderNever {
		if recrawled, err = anyRecrawled(s); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case cfg.Render != crawl.RenderNever:
		notes = append(notes, fmt.Sprintf("the WARC files were not compared with an import: the crawl renders pages (render %s), and the links a browser finds are not in them", cfg.Render))
	case recrawled:
		notes = append(notes, "the WARC files were not compared with an import: hosts were crawled more than once, and an import takes no links from a revisit record")
	default:
		diffs, err := compareImport(ctx, s, inputs, &cfg)
		if err != nil {
			return nil, nil, err
		}
		problems = append(problems, diffs...)
	}
	return problems, notes, nil
}

// checkWarcRobots lists, as problems, the robots.txt outcomes the store
// caches (and judged pages by) that the committed WARC files hold no
// robots.txt exchange of: every host's, since the first record of the
// files (a record cached before the crawl archived has none).
func checkWarcRobots(s *kv.Store, inputs []string) ([]string, error) {
	archived := map[string]bool{}
	var first time.Time
	for _, path := range inputs {
		r, err := warc.NewReader(path, 0)
		if err != nil {
			return nil, err
		}
		for {
			rec, err := r.Next()
			if err != nil {
				break // the end, or damage, which the other checks report
			}
			if first.IsZero() || (!rec.Date.IsZero() && rec.Date.Before(first)) {
				first = rec.Date
			}
			if u, err := url.Parse(rec.TargetURI); err == nil && rec.Type == "response" && u.Path == "/robots.txt" {
				if h, err := graph.HostOf(u); err == nil {
					archived[h] = true
				}
			}
			rec.Close()
		}
		r.Close()
	}
	var problems []string
	err := s.View(func(tx *kv.Tx) error {
		return crawl.ForEachRobots(tx, func(host string, fetched time.Time) error {
			// WARC-Date is the request's time, to the second or finer;
			// the record's is its answer's.
			if !archived[host] && !first.IsZero() && !fetched.Before(first.Add(-time.Second)) && len(problems) < maxWarcDiffs {
				problems = append(problems, fmt.Sprintf("warc: the store caches the robots.txt of %s (read %s) but no WARC file holds its exchange", host, fetched.UTC().Format(time.RFC3339)))
			}
			return nil
		})
	})
	return problems, err
}

// crawlFiles lists the WARC files of the crawl prefix in dir, in the order
// they were written.
func crawlFiles(dir, prefix string) ([]warcFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	var out []warcFile
	for _, e := range ents {
		p, n, open, ok := warc.ParseName(e.Name())
		if e.IsDir() || !ok || p != prefix {
			continue
		}
		out = append(out, warcFile{path: filepath.Join(dir, e.Name()), name: strings.TrimSuffix(e.Name(), ".open"), serial: n, open: open})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].serial < out[j].serial })
	return out, nil
}

// committedParts returns the files as the store's commits refer to them,
// for an import: the finished files, and the part of an open file up to
// the last commit (copied into a temporary directory, which the caller
// removes). It says, as problems, what is past the last commit: records
// of pages whose commit did not happen.
func committedParts(files []warcFile, end *warc.Position) (inputs []string, tmp string, problems []string) {
	tmp, err := os.MkdirTemp("", "weaver-check-*")
	if err != nil {
		return nil, "", []string{fmt.Sprintf("warc: %v", err)}
	}
	at := -1
	if end != nil {
		if _, n, _, ok := warc.ParseName(end.File); ok {
			at = n
		}
	}
	none := end != nil && end.File == "" // the store's commits wrote no record
	found := end == nil || none
	for _, f := range files {
		fi, err := os.Stat(f.path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("warc: %v", err))
			continue
		}
		switch {
		case none:
			problems = append(problems, fmt.Sprintf("warc: %s: the store's commits wrote no record: records of pages whose commit did not happen; the next weaver crawl on this store removes it", f.path))
		case end != nil && f.name == end.File:
			found = true
			if fi.Size() < end.Offset {
				problems = append(problems, fmt.Sprintf("warc: %s: %d bytes, the store's last commit ends at %d: records of committed pages are missing", f.path, fi.Size(), end.Offset))
			}
			if fi.Size() > end.Offset {
				problems = append(problems, fmt.Sprintf("warc: %s: %d bytes past the store's last commit (offset %d): records of pages whose commit did not happen; the next weaver crawl on this store cuts them", f.path, fi.Size()-end.Offset, end.Offset))
			}
			if !f.open && fi.Size() == end.Offset {
				inputs = append(inputs, f.path)
				continue
			}
			part := filepath.Join(tmp, f.name)
			if err := copyPrefix(f.path, part, end.Offset); err != nil {
				problems = append(problems, fmt.Sprintf("warc: %v", err))
				continue
			}
			inputs = append(inputs, part)
		case at >= 0 && f.serial > at:
			problems = append(problems, fmt.Sprintf("warc: %s: started after the store's last commit (in %s): records of pages whose commit did not happen; the next weaver crawl on this store removes it", f.path, end.File))
		case f.open:
			problems = append(problems, fmt.Sprintf("warc: %s is still open: left by a crawl that stopped without closing it; the next weaver crawl on this store closes it", f.path))
			part := filepath.Join(tmp, f.name)
			if err := copyPrefix(f.path, part, fi.Size()); err != nil {
				problems = append(problems, fmt.Sprintf("warc: %v", err))
				continue
			}
			inputs = append(inputs, part)
		default:
			inputs = append(inputs, f.path)
		}
	}
	if !found {
		problems = append(problems, fmt.Sprintf("warc: %s, where the store's last commit ends, is not in the directory", end.File))
	}
	return inputs, tmp, problems
}

// copyPrefix copies the first n bytes of src to dst.
func copyPrefix(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, n); err != nil && err != io.EOF {
		out.Close()
		return err
	}
	return out.Close()
}

// compareImport imports files into a new store by cfg's rules and lists
// the edges whose weight differs from the store's.
func compareImport(ctx context.Context, s *kv.Store, files []string, cfg *crawl.Config) ([]string, error) {
	tmp, err := os.MkdirTemp("", "weaver-check-import-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	imp, err := kv.Open(filepath.Join(tmp, "import.bolt"), kv.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer imp.Close()
	opts := ingest.Defaults()
	opts.MaxOutboundLinks, opts.ExcludeHosts, opts.Scope, opts.MaxBodyBytes = cfg.MaxOutboundLinks, cfg.ExcludeHosts, cfg.Scope, cfg.MaxBodyBytes
	if _, err := ingest.Run(ctx, imp, files, opts); err != nil {
		return []string{fmt.Sprintf("warc: importing the files: %v", err)}, nil
	}
	stored, err := hostEdges(s)
	if err != nil {
		return nil, err
	}
	imported, err := hostEdges(imp)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for k, w := range stored {
		switch iw, ok := imported[k]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("warc: edge %s → %s (weight %d) is not in the WARC files", k[0], k[1], w))
		case iw != w:
			diffs = append(diffs, fmt.Sprintf("warc: edge %s → %s: weight %d in the WARC files, %d in the store", k[0], k[1], iw, w))
		}
	}
	for k, w := range imported {
		if _, ok := stored[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("warc: edge %s → %s (weight %d) is in the WARC files, not in the store", k[0], k[1], w))
		}
	}
	sort.Strings(diffs)
	if n := len(diffs); n > maxWarcDiffs {
		diffs = append(diffs[:maxWarcDiffs], fmt.Sprintf("warc: … and %d more edges differ (%d in all): an import of the WARC files does not give the store's graph", n-maxWarcDiffs, n))
	}
	return diffs, nil
}

// hostEdges reads a store's edges as host pairs → weight.
func hostEdges(s *kv.Store) (map[[2]string]uint64, error) {
	out := map[[2]string]uint64{}
	err := s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		if err := graph.ForEachNode(tx, func(n *graph.Node) error { hosts[n.ID] = n.Host; return nil }); err != nil {
			return err
		}
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			out[[2]string{hosts[e.From], hosts[e.To]}] = e.Weight
			return nil
		})
	})
	return out, err
}

// anyRecrawled reports whether a host of s was crawled more than once.
func anyRecrawled(s *kv.Store) (recrawled bool, err error) {
	err = s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			if n.CrawlCount > 1 {
				recrawled = true
				return graph.ErrStop
			}
			return nil
		})
	})
	return recrawled, err
}
