package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/serve"
)

// The store of exportStore: example.com → www.example.com (1), example.com
// → iana.org (3), iana.org → example.com (2), www.example.com → iana.org
// (1). PageRank with α = 0.85 solves
//
//	e = 0.05 + 0.85·(2/2·i)        (iana.org gives all its rank to example.com)
//	w = 0.05 + 0.85·(1/4·e)
//	i = 0.05 + 0.85·(3/4·e + w)
//
// (0.05 = 0.15/3), and the harmonic centralities are iana.org 1 + 1 (both
// others link to it), example.com 1 + 1/2, www.example.com 1 + 1/2.
func rankWant() map[string][2]float64 {
	const a = 0.85
	b := (1 - a) / 3
	// Substitute w and e into i: i = b + a·(3/4·e + b + a/4·e) with
	// e = b + a·i.
	k := a * (0.75 + a/4)
	i := (b + a*b + k*b) / (1 - k*a)
	e := b + a*i
	w := b + a*e/4
	return map[string][2]float64{"iana.org": {i, 2}, "example.com": {e, 1.5}, "www.example.com": {w, 1.5}}
}

func TestRank_Table(t *testing.T) {
	db := exportStore(t)
	code, out, errs := runWeaverCmd(t, nil, "rank", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := rankWant()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "Top 3 of 3 hosts by PageRank (4 edges; harmonic centrality: exact)") {
		t.Fatalf("output:\n%s", out)
	}
	if f := strings.Fields(lines[2]); strings.Join(f, " ") != "# host pagerank harmonic in-weight title" {
		t.Errorf("header %q", lines[2])
	}
	// iana.org first (in-weight 3 + 1), then example.com, then www.
	for k, host := range []string{"iana.org", "example.com", "www.example.com"} {
		f := strings.Fields(lines[3+k])
		if len(f) < 5 || f[1] != host {
			t.Errorf("row %d: %q, want %s", k+1, lines[3+k], host)
			continue
		}
		if pr := fmt.Sprintf("%.6g", want[host][0]); f[2] != pr {
			t.Errorf("%s: pagerank %s, want %s", host, f[2], pr)
		}
		if h := fmt.Sprintf("%.2f", want[host][1]); f[3] != h {
			t.Errorf("%s: harmonic %s, want %s", host, f[3], h)
		}
	}
	if !strings.Contains(lines[3], "Title of iana.org") || strings.Contains(lines[5], "Title") {
		t.Errorf("titles: %q %q", lines[3], lines[5])
	}
}

func TestRank_JSON(t *testing.T) {
	db := exportStore(t)
	code, out, errs := runWeaverCmd(t, nil, "rank", "--db", db, "--json", "--top", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var list export.RankList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if list.Nodes != 3 || list.Edges != 4 || list.Domains || list.HarmonicMethod != "exact" || len(list.Top) != 3 {
		t.Fatalf("%+v", list)
	}
	want := rankWant()
	inWeight := map[string]uint64{"iana.org": 4, "example.com": 2, "www.example.com": 1}
	sum := 0.0
	for _, r := range list.Top {
		w := want[r.Host]
		if math.Abs(r.PageRank-w[0]) > 1e-9 || math.Abs(r.Harmonic-w[1]) > 1e-12 || r.InWeight != inWeight[r.Host] {
			t.Errorf("%s: pagerank %v harmonic %v in-weight %d; want %v %v %d", r.Host, r.PageRank, r.Harmonic, r.InWeight, w[0], w[1], inWeight[r.Host])
		}
		sum += r.PageRank
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("pageranks sum to %v", sum)
	}

	// --top 1 keeps the first.
	code, out, _ = runWeaverCmd(t, nil, "rank", "--db", db, "--json", "--top", "1")
	var one export.RankList
	if err := json.Unmarshal([]byte(out), &one); err != nil || code != 0 || len(one.Top) != 1 || one.Top[0].Host != "iana.org" {
		t.Errorf("--top 1: exit %d, %v: %s", code, err, out)
	}
}

// TestRank_Domains: example.com and www.example.com become one domain;
// the link between them is dropped, the others summed.
func TestRank_Domains(t *testing.T) {
	db := exportStore(t)
	code, out, errs := runWeaverCmd(t, nil, "rank", "--db", db, "--domains", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var list export.RankList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	// example.com ⇄ iana.org, weights 4 and 2: a two-node cycle, equal
	// ranks; ties keep id order (example.com was created first).
	if !list.Domains || list.Nodes != 2 || list.Edges != 2 || len(list.Top) != 2 ||
		list.Top[0].Host != "example.com" || list.Top[1].Host != "iana.org" ||
		math.Abs(list.Top[0].PageRank-0.5) > 1e-9 || list.Top[0].Harmonic != 1 ||
		list.Top[0].InWeight != 2 || list.Top[1].InWeight != 4 {
		t.Errorf("%+v", list)
	}
	code, out, _ = runWeaverCmd(t, nil, "rank", "--db", db, "--domains")
	if code != 0 || !strings.Contains(out, "Top 2 of 2 domains by PageRank") || !strings.Contains(out, "domain") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestRank_Usage(t *testing.T) {
	dir := t.TempDir()
	notStore := filepath.Join(dir, "notes.txt")
	os.WriteFile(notStore, []byte("hello, this is not a store at all, not even close to one"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rank", "--db", filepath.Join(dir, "missing.bolt")}, "missing.bolt: no such store"},
		{[]string{"rank", "--db", notStore}, "not a weaver store"},
		{[]string{"rank", "extra"}, "no arguments"},
		{[]string{"rank", "--top", "-1"}, "--top -1"},
		{[]string{"rank", "--top", "many"}, "invalid value"},
		{[]string{"rank", "--min-weight", "2"}, "unknown flag --min-weight"},
	} {
		code, _, errs := runWeaverCmd(t, nil, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.bolt")); err == nil {
		t.Error("rank created a store")
	}
	code, out, errs := runWeaverCmd(t, nil, "rank", "-h")
	if code != 0 || errs != "" || !strings.Contains(out, "weaver rank [--db FILE] [--top N] [--domains] [--weights all|latest] [--json]") || !strings.Contains(out, "Examples:") {
		t.Errorf("-h: exit %d, want the usage on stdout:\n%s\nstderr: %s", code, out, errs)
	}
}

// TestRank_InUse: a store held by a running crawl is ranked through the
// crawl's API; without --listen, the hint of weaver status.
func TestRank_InUse(t *testing.T) {
	db := exportStore(t)
	s := holdStore(t, db)
	code, _, errs := runWeaverCmd(t, nil, "rank", "--db", db)
	if code != 2 || !strings.Contains(errs, "serves no status API") {
		t.Errorf("no --listen: exit %d:\n%s", code, errs)
	}
	c, err := crawl.New(crawl.Defaults(), s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.NewCrawlHandler(c, s, func() {}, "test"))
	defer srv.Close()
	if err := os.WriteFile(archive.ListenPath(db), []byte(strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, domains := range []bool{false, true} {
		args := []string{"rank", "--db", db, "--json", "--top", "0"}
		if domains {
			args = append(args, "--domains")
		}
		code, out, errs := runWeaverCmd(t, nil, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var remote export.RankList
		if err := json.Unmarshal([]byte(out), &remote); err != nil {
			t.Fatal(err)
		}
		local, err := export.Top(t.Context(), s, export.Options{Domains: domains}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !sameRanks(remote, local) {
			t.Errorf("domains=%v: through the API %+v, from the store %+v", domains, remote, local)
		}
	}
}

// TestRank_InUse_Token: a crawl API behind a token answers weaver rank
// when WEAVER_TOKEN holds it, and refuses it otherwise.
func TestRank_InUse_Token(t *testing.T) {
	db := exportStore(t)
	s := holdStore(t, db)
	c, err := crawl.New(crawl.Defaults(), s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	srv := httptest.NewServer(serve.Auth{Token: token}.Wrap(serve.NewCrawlHandler(c, s, func() {}, "test")))
	defer srv.Close()
	if err := os.WriteFile(archive.ListenPath(db), []byte(strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runWeaverCmd(t, map[string]string{"WEAVER_TOKEN": token}, "rank", "--db", db)
	if code != 0 || !strings.Contains(out, "Top 3 of 3 hosts") {
		t.Errorf("with the token: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runWeaverCmd(t, nil, "rank", "--db", db)
	if code != 1 || !strings.Contains(errs, "401") {
		t.Errorf("without the token: exit %d, want 1 and a 401:\n%s", code, errs)
	}
}

func sameRanks(a, b export.RankList) bool {
	if a.Nodes != b.Nodes || a.Edges != b.Edges || a.Domains != b.Domains || a.HarmonicMethod != b.HarmonicMethod || len(a.Top) != len(b.Top) {
		return false
	}
	for i := range a.Top {
		if a.Top[i] != b.Top[i] {
			return false
		}
	}
	return true
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"Plain":                   "Plain",
		"  Two\n\tlines\x00here ": "Two lines here",
		strings.Repeat("é", 70):   strings.Repeat("é", 59) + "…",
	} {
		if got := oneLine(in, 60); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
