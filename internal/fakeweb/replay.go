package fakeweb

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// FromEdges builds a web from a host graph, one edge per line:
// "source<TAB>target<TAB>weight". Each line becomes one link from source's
// home page to target's; a home page lists its targets by weight, heaviest
// first, then by name. The seed (host 0) is the host with the most lines as
// source, the first by name on a tie; the other hosts follow by name.
//
// Blank lines and lines starting with # are ignored. Lines with the wrong
// number of fields, a weight that is not a positive integer, a host that is not
// a plain lower-case DNS name or IPv4 address, or equal source and target are
// skipped and counted (see Malformed). From cfg, Hosts is ignored and
// RobotsDisallowEvery and CrawlDelayEvery default to never.
//
// It returns an error wrapping the read error, or ErrNoEdges if no line is
// valid.
func FromEdges(r io.Reader, cfg Config) (*Web, error) {
	type edge struct {
		dst    string
		weight int
	}
	out := make(map[string][]edge)
	hosts := make(map[string]bool)
	malformed := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			malformed++
			continue
		}
		src, dst := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		weight, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil || weight < 1 || !validHost(src) || !validHost(dst) || src == dst {
			malformed++
			continue
		}
		out[src] = append(out[src], edge{dst, weight})
		hosts[src], hosts[dst] = true, true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fakeweb: read edges: %w", err)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("fakeweb: read edges: %w", ErrNoEdges)
	}

	seed := ""
	for h, es := range out {
		if seed == "" || len(es) > len(out[seed]) || len(es) == len(out[seed]) && h < seed {
			seed = h
		}
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		if h != seed {
			names = append(names, h)
		}
	}
	slices.Sort(names)
	names = append([]string{seed}, names...)

	if cfg.RobotsDisallowEvery == 0 {
		cfg.RobotsDisallowEvery = -1
	}
	if cfg.CrawlDelayEvery == 0 {
		cfg.CrawlDelayEvery = -1
	}
	w := newWeb(cfg)
	w.malformed = malformed
	w.sites = make([]site, len(names))
	for i, n := range names {
		w.sites[i] = site{name: n, robots: w.robotsFor(i)}
	}
	w.buildIndex()
	for i := range w.sites {
		es := out[w.sites[i].name]
		slices.SortStableFunc(es, func(a, b edge) int {
			return cmp.Or(cmp.Compare(b.weight, a.weight), cmp.Compare(a.dst, b.dst))
		})
		links := make([]int32, len(es))
		for k, e := range es {
			links[k] = int32(w.index[e.dst])
		}
		w.sites[i].out = links
	}
	w.finish()
	return w, nil
}

// validHost reports whether h is a lower-case DNS name (letters, digits,
// hyphens and underscores in labels of 1 to 63 bytes) or an IPv4 address,
// without port or trailing dot.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
