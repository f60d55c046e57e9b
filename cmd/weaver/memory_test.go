package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
	"github.com/weaver-crawler/weaver/rank"
)

// TestFitMemory: with less memory left than the store's ranks and layout
// take (rank.MemoryNeed, layout.MemoryNeed), an export leaves each out
// with one line saying how to get it; --top, which needs the ranks,
// stops with a usage error; with enough memory, nothing changes. The
// e2e test TestExport_MemoryLimit reads a real control group's limit.
func TestFitMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.bolt")
	if err := storetest.BuildBig(path, storetest.Web, 5_000); err != nil {
		t.Fatal(err)
	}
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ranks, lay := rank.MemoryNeed(5_000, 50_000), layout.MemoryNeed(5_000, 50_000)
	for _, tc := range []struct {
		name           string
		avail          uint64
		top            int
		noRanks, noLay bool
		lines          []string
		usage          bool
	}{
		{name: "plenty", avail: 64 << 30},
		{name: "unknown", avail: 0},
		{name: "layout too big", avail: lay - 1, noLay: true, lines: []string{"weaver export: layout left out: for 5000 hosts and 50000 edges it takes about"}},
		{name: "both too big", avail: min(ranks, lay) - 1, noRanks: true, noLay: true, lines: []string{"weaver export: ranks left out:", "weaver export: layout left out:"}},
		{name: "top", avail: min(ranks, lay) - 1, top: 10, usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			c := &exportCommand{e: &env{Stderr: &stderr}, db: path}
			opt := export.Options{Top: tc.top}
			err := c.fitMemory(s, &opt, tc.avail, "a test's figure")
			if tc.usage {
				var u usageError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), "--top ranks the hosts") {
					t.Fatalf("got %v, want a usage error naming --top", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opt.NoRanks != tc.noRanks || opt.NoLayout != tc.noLay {
				t.Errorf("no ranks %v, no layout %v; want %v, %v", opt.NoRanks, opt.NoLayout, tc.noRanks, tc.noLay)
			}
			got := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(tc.lines) == 0 && stderr.Len() > 0 || len(tc.lines) > 0 && len(got) != len(tc.lines) {
				t.Fatalf("stderr:\n%s\nwant %d lines", stderr.String(), len(tc.lines))
			}
			for i, want := range tc.lines {
				if !strings.HasPrefix(got[i], want) || !strings.Contains(got[i], "a test's figure") {
					t.Errorf("line %d: %q, want it to start %q and name where the figure comes from", i, got[i], want)
				}
			}
		})
	}
}
