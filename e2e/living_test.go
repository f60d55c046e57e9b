package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// livingArgs crawl a Living web with a revisit policy.
func livingArgs(srv *fakeweb.Server, db string, extra ...string) []string {
	args := []string{"crawl", "--db", db, "--metrics", db + ".metrics", "--connect-to", srv.ConnectTo(),
		"--quiet", "--retry-delay", "10ms", "--max-outbound-links", "0"}
	return append(args, extra...)
}

// startLiving serves a Living web of cfg on 127.0.0.1 until the test ends.
func startLiving(t *testing.T, cfg fakeweb.LivingConfig) (*fakeweb.Living, *fakeweb.Server) {
	t.Helper()
	l := fakeweb.NewLiving(cfg)
	srv, err := l.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return l, srv
}

// exportAt reads weaver export --json --at at as host pairs → weight.
func exportAt(t *testing.T, dir, db, at string) map[[2]string]int {
	t.Helper()
	r := weaver(t, dir, "export", "--db", db, "--no-ranks", "--json", "-", "--at", at)
	if r.code != 0 {
		t.Fatalf("export --at %s: exit %d\n%s", at, r.code, r.stderr)
	}
	var doc struct {
		Nodes []struct {
			ID   uint64 `json:"id"`
			Host string `json:"host"`
		} `json:"nodes"`
		Edges []struct {
			Source, Target, Weight uint64
		} `json:"edges"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("export --at %s: %v", at, err)
	}
	hosts := map[uint64]string{}
	for _, n := range doc.Nodes {
		hosts[n.ID] = n.Host
	}
	out := map[[2]string]int{}
	for _, e := range doc.Edges {
		if hosts[e.Source] == "" || hosts[e.Target] == "" {
			t.Errorf("export --at %s: edge %d→%d names a node it does not export", at, e.Source, e.Target)
		}
		out[[2]string{hosts[e.Source], hosts[e.Target]}] = int(e.Weight)
	}
	return out
}

// nodesAt checks the nodes of export --at: each says how far its
// attributes are those then (as_of), and a host whose page is given has
// the title of the edition the web last served it by then; a host the
// history cannot tell about has none.
func nodesAt(t *testing.T, dir, db string, at time.Time, served []fakeweb.Served) {
	t.Helper()
	edition := map[string]int{}
	for _, s := range served {
		if s.Status == 200 && !s.At.After(at) {
			edition[s.Host] = s.Edition
		}
	}
	r := weaver(t, dir, "export", "--db", db, "--no-ranks", "--json", "-", "--at", at.Format(time.RFC3339Nano))
	var doc struct {
		Graph struct {
			NodeAttributes string `json:"node_attributes"`
		} `json:"graph"`
		Nodes []struct {
			Host, Title, Status string
			AsOf                string `json:"as_of"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("export --at: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	if doc.Graph.NodeAttributes == "" {
		t.Error("export --at: no node_attributes in the graph's metadata")
	}
	kinds := map[string]int{}
	for _, n := range doc.Nodes {
		kinds[n.AsOf]++
		ed, fetched := edition[n.Host]
		switch n.AsOf {
		case "at", "page":
			if want := fmt.Sprintf("%s edition %d", n.Host, ed); fetched && n.Title != want {
				t.Errorf("export --at: %s (as_of %s) title %q, the web served %q", n.Host, n.AsOf, n.Title, want)
			}
		case "crawls":
			if n.Title != "" {
				t.Errorf("export --at: %s (as_of crawls) has the title %q", n.Host, n.Title)
			}
		default:
			t.Errorf("export --at: %s as_of %q", n.Host, n.AsOf)
		}
	}
	if kinds["page"] == 0 || kinds["crawls"] == 0 {
		t.Errorf("export --at: as_of %v: want stable hosts' pages and volatile hosts' crawls", kinds)
	}
}

func sameGraph(t *testing.T, what string, got, want map[[2]string]int) {
	t.Helper()
	var diffs []string
	for k, w := range want {
		if got[k] != w {
			diffs = append(diffs, "want "+k[0]+"→"+k[1])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "extra "+k[0]+"→"+k[1])
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("%s: %d edges, want %d: %s", what, len(got), len(want), strings.Join(diffs, ", "))
	}
}

// quietMoment is a time in the middle of the longest pause between two
// answers of the web, away from its first and last answers: the store's
// crawl times (commit times, a moment after the answers) are then all on
// the same side of it as the answers.
func quietMoment(served []fakeweb.Served) time.Time {
	times := make([]time.Time, len(served))
	for i, s := range served {
		times[i] = s.At
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	best, at := time.Duration(0), time.Time{}
	for i := len(times) / 4; i+1 < len(times)*3/4; i++ {
		if d := times[i+1].Sub(times[i]); d > best {
			best, at = d, times[i].Add(d/2)
		}
	}
	return at
}

// TestLiving_Revisits: a crawl with a revisit policy stays on a web that
// changes, fetches the volatile hosts more often than the stable ones,
// which answer 304, ends on --max-duration, and its store answers "what
// was the graph at T" exactly as the web's own log of what it served.
func TestLiving_Revisits(t *testing.T) {
	t.Parallel()
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 8, Volatile: 3, Period: 400 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	began := time.Now()
	r := weaver(t, dir, livingArgs(srv, db, "--delay", "0", "--revisit", "200ms", "--revisit-max", "3200ms", "--max-duration", "5s", l.Seed())...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if took := time.Since(began); took < 5*time.Second || took > 20*time.Second {
		t.Errorf("crawl took %v with --max-duration 5s", took)
	}
	m := metrics(t, db+".metrics")
	if m.TerminationReason != "max_duration" {
		t.Errorf("termination_reason %q, want max_duration", m.TerminationReason)
	}
	served := l.Served()
	fetches := map[string]int{}
	notModified := map[string]int{}
	last := map[string]time.Time{}
	for _, s := range served {
		fetches[s.Host]++
		if s.Status == 304 {
			notModified[s.Host]++
		}
		if p, ok := last[s.Host]; ok && s.At.Sub(p) < 100*time.Millisecond {
			t.Errorf("%s fetched %v after its last fetch: below the shortest interval (100ms)", s.Host, s.At.Sub(p))
		}
		last[s.Host] = s.At
	}
	var volatile, stable, stable304, stableFetches int
	for i := 1; i < 8; i++ {
		h := l.Host(i)
		if l.Volatile(i) {
			volatile += fetches[h]
		} else {
			stable += fetches[h]
			stable304 += notModified[h]
			stableFetches += fetches[h]
			if notModified[h] != fetches[h]-1 {
				t.Errorf("stable %s: %d fetches, %d answered 304; want every revisit 304", h, fetches[h], notModified[h])
			}
		}
	}
	volAvg, stAvg := float64(volatile)/3, float64(stable)/4
	t.Logf("fetches per host: volatile %.1f, stable %.1f; 304s %d of %d revisits; metrics: revisits %d, not_modified %d, changed %d, unchanged %d, bytes_saved %d",
		volAvg, stAvg, m.NotModified, m.Revisits, m.Revisits, m.NotModified, m.Changed, m.Unchanged, m.BytesSaved)
	if volAvg <= stAvg+1 {
		t.Errorf("volatile hosts fetched %.1f times each, stable ones %.1f: want the volatile ones more often", volAvg, stAvg)
	}
	if stAvg < 3 {
		t.Errorf("stable hosts fetched %.1f times each in 5s with --revisit 200ms: want at least 3", stAvg)
	}
	if m.NotModified != int64(stable304+countVolatile304(l, served)) || m.NotModified == 0 {
		t.Errorf("not_modified %d, the web answered %d 304s", m.NotModified, stable304+countVolatile304(l, served))
	}
	if m.Revisits != int64(len(served)-8) {
		t.Errorf("revisits %d, the web answered %d home pages to 8 hosts", m.Revisits, len(served))
	}
	if m.BytesSaved <= 0 || m.Changed == 0 || m.Unchanged == 0 || m.NextDue == nil {
		t.Errorf("metrics: bytes_saved %d, changed %d, unchanged %d, next_due %v", m.BytesSaved, m.Changed, m.Unchanged, m.NextDue)
	}
	edges(t, db) // the store's invariants

	// The graph now, and at a moment of the crawl, as the web served it.
	sameGraph(t, "export --at now", exportAt(t, dir, db, "now"), l.ExpectedAt(time.Now()))
	mid := quietMoment(served)
	sameGraph(t, "export --at "+mid.Format(time.RFC3339Nano), exportAt(t, dir, db, mid.Format(time.RFC3339Nano)), l.ExpectedAt(mid))
	nodesAt(t, dir, db, mid, served)
	if got := exportAt(t, dir, db, began.Add(-time.Hour).Format(time.RFC3339)); len(got) != 0 {
		t.Errorf("export --at an hour before the crawl: %d edges, want none", len(got))
	}

	// Without --at: every edge ever seen, those gone marked.
	r = weaver(t, dir, "export", "--db", db, "--no-ranks", "--json", "-")
	var all struct {
		Nodes []struct {
			ID   uint64 `json:"id"`
			Host string `json:"host"`
		} `json:"nodes"`
		Edges []struct {
			Source, Target uint64
			Gone           bool   `json:"gone"`
			FirstSeen      string `json:"first_seen"`
			LastSeen       string `json:"last_seen"`
		} `json:"edges"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil {
		t.Fatalf("export: %v\n%s", err, r.stderr)
	}
	hosts := map[uint64]string{}
	for _, n := range all.Nodes {
		hosts[n.ID] = n.Host
	}
	now := l.ExpectedAt(time.Now())
	present := 0
	for _, e := range all.Edges {
		k := [2]string{hosts[e.Source], hosts[e.Target]}
		_, current := now[k]
		if e.Gone == current {
			t.Errorf("export: %s→%s gone %t, but the web links it now: %t", k[0], k[1], e.Gone, current)
		}
		if !current {
			continue
		}
		present++
		if e.FirstSeen == "" || e.LastSeen < e.FirstSeen {
			t.Errorf("export: %s→%s first seen %q, last seen %q", k[0], k[1], e.FirstSeen, e.LastSeen)
		}
	}
	if present != len(now) || len(all.Edges) <= len(now) {
		t.Errorf("export: %d edges, %d present; the web links %d now", len(all.Edges), present, len(now))
	}
	// The CSV export marks the same edges gone, and the GEXF export with
	// --gexf-timeline plays the history on Gephi's timeline.
	r = weaver(t, dir, "export", "--db", db, "--no-ranks", "--csv", filepath.Join(dir, "g"), "--gexf", filepath.Join(dir, "g.gexf"), "--gexf-timeline")
	csvEdges, err := os.ReadFile(filepath.Join(dir, "g-edges.csv"))
	if r.code != 0 || err != nil {
		t.Fatalf("export --csv --gexf: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	if gone := csvCount(t, csvEdges, "gone", "true"); gone != len(all.Edges)-present || gone == 0 {
		t.Errorf("export --csv: %d edges gone, the JSON export %d", gone, len(all.Edges)-present)
	}
	if gexf, err := os.ReadFile(filepath.Join(dir, "g.gexf")); err != nil || !strings.Contains(string(gexf), `mode="dynamic" timeformat="dateTime"`) ||
		strings.Count(string(gexf), `<attvalue for="gone" value="true"/>`) != len(all.Edges)-present || !strings.Contains(string(gexf), " end=\"") {
		t.Errorf("export --gexf: not dynamic, or gone edges not marked (%v)", err)
	}
	r = weaver(t, dir, "status", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "Revisits:") || !strings.Contains(r.stdout, "Next due:") {
		t.Errorf("status: exit %d, no revisits or next due:\n%s%s", r.code, r.stdout, r.stderr)
	}

	// weaver diff --from T1 --to T2: what appeared and disappeared, for
	// the moment of the crawl and now, and for before the crawl and now.
	for _, from := range []time.Time{mid, began.Add(-time.Hour)} {
		to := time.Now()
		r = weaver(t, dir, "diff", "--db", db, "--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano), "--json")
		if r.code != 0 {
			t.Fatalf("diff --from --to: exit %d\n%s", r.code, r.stderr)
		}
		var d struct {
			Appeared    []struct{ From, To string } `json:"edges_appeared"`
			Disappeared []struct{ From, To string } `json:"edges_disappeared"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatal(err)
		}
		before, after := l.ExpectedAt(from), l.ExpectedAt(to)
		got := map[string]bool{}
		for _, e := range d.Appeared {
			got["+"+e.From+"→"+e.To] = true
		}
		for _, e := range d.Disappeared {
			got["-"+e.From+"→"+e.To] = true
		}
		want := map[string]bool{}
		for k := range after {
			if _, ok := before[k]; !ok {
				want["+"+k[0]+"→"+k[1]] = true
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				want["-"+k[0]+"→"+k[1]] = true
			}
		}
		if len(got) != len(want) || len(got) != len(d.Appeared)+len(d.Disappeared) {
			t.Errorf("diff from %v: got %v, want %v", from, got, want)
		}
		for k := range want {
			if !got[k] {
				t.Errorf("diff from %v: %s missing", from, k)
			}
		}
	}
	if len(l.ExpectedAt(time.Now())) == 0 {
		t.Error("the web links nothing now: the diffs proved nothing")
	}
}

func countVolatile304(l *fakeweb.Living, served []fakeweb.Served) int {
	n := 0
	for _, s := range served {
		if s.Status == 304 && s.Host != l.Host(0) && !l.Volatile(hostIndex(s.Host)) {
			continue
		}
		if s.Status == 304 {
			n++
		}
	}
	return n
}

func hostIndex(h string) int {
	var i int
	for _, c := range strings.TrimSuffix(strings.TrimPrefix(h, "h"), ".test") {
		i = 10*i + int(c-'0')
	}
	return i
}

// TestLiving_OneFetchPerCrawl: without a revisit policy every host is
// fetched once, though it is reached at several depths, and a crawl of
// the finished store fetches nothing and says so.
func TestLiving_OneFetchPerCrawl(t *testing.T) {
	t.Parallel()
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 8, Volatile: 3, Period: time.Hour})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	if r := weaver(t, dir, livingArgs(srv, db, "--delay", "0", l.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	fetches := map[string]int{}
	for _, s := range l.Served() {
		fetches[s.Host]++
	}
	for i := range 8 {
		if fetches[l.Host(i)] != 1 {
			t.Errorf("%s fetched %d times, want once", l.Host(i), fetches[l.Host(i)])
		}
	}
	r := weaver(t, dir, "crawl", "--db", db, "--metrics", db+".metrics", "--connect-to", srv.ConnectTo())
	if r.code != 0 {
		t.Fatalf("second crawl: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(l.Served()); n != 8 {
		t.Errorf("a crawl of the finished store fetched %d home pages", n-8)
	}
	if !strings.Contains(r.stdout+r.stderr, "Nothing is due") {
		t.Errorf("the second crawl does not say nothing is due:\n%s%s", r.stdout, r.stderr)
	}
}

// TestLiving_KillResume: kill -9 in the middle of revisits, then resume:
// no host whose crawl was committed is fetched again before the due time
// the store held, and the store answers --at now as the web served.
func TestLiving_KillResume(t *testing.T) {
	t.Parallel()
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 8, Volatile: 3, Period: 300 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	args := livingArgs(srv, db, "--delay", "50ms", "--revisit", "200ms", "--revisit-max", "1600ms", l.Seed())
	if signalled, _ := interrupt(t, dir, args, 2500*time.Millisecond, syscall.SIGKILL); !signalled {
		t.Fatal("the crawl ended before the kill")
	}
	killed := time.Now()
	// What the store promised: each host's due time, and the hosts whose
	// crawl was under way (leased): those may be asked again at once.
	due := map[string]time.Time{}
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			if tx.GetRaw(kv.BucketLeases, kv.U64(n.ID)) == nil {
				due[n.Host] = n.NextDue
			}
			return nil
		})
	})
	s.Close()
	before := len(l.Served())
	// The resume runs by the stored settings (the revisit policy too).
	r := weaver(t, dir, "crawl", "--db", db, "--metrics", db+".metrics", "--quiet", "--max-duration", "2s")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	firstAfter := map[string]time.Time{}
	for _, sv := range l.Served()[before:] {
		if _, ok := firstAfter[sv.Host]; !ok {
			firstAfter[sv.Host] = sv.At
		}
	}
	if len(firstAfter) == 0 {
		t.Fatal("the resumed crawl revisited nothing")
	}
	for h, at := range firstAfter {
		if d, ok := due[h]; ok && !d.IsZero() && at.Before(d) {
			t.Errorf("%s fetched at %v after the restart, before it was due (%v)", h, at.Sub(killed), d.Sub(killed))
		}
	}
	if m := metrics(t, db+".metrics"); m.TerminationReason != "max_duration" || m.Revisits == 0 {
		t.Errorf("resume: termination_reason %q, revisits %d", m.TerminationReason, m.Revisits)
	}
	edges(t, db)
	sameGraph(t, "export --at now after the resume", exportAt(t, dir, db, "now"), l.ExpectedAt(time.Now()))
	// A moment of the resumed run: a page the web served just before the
	// kill may never have been committed (kill -9 loses the page in
	// flight, fetched again later), so the web's log and the store may
	// disagree about the time around the kill, and only there.
	mid := quietMoment(l.Served()[before:])

	// Merged with another store that crawled the same web later, the
	// history of both answers --at as the web served, now and before.
	db2 := filepath.Join(dir, "w2.bolt")
	if r := weaver(t, dir, livingArgs(srv, db2, "--delay", "0", l.Seed())...); r.code != 0 {
		t.Fatalf("second crawl: exit %d\n%s", r.code, r.stderr)
	}
	merged := filepath.Join(dir, "m.bolt")
	if r := weaver(t, dir, "merge", "-o", merged, db, db2); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	edges(t, merged)
	sameGraph(t, "merged export --at now", exportAt(t, dir, merged, "now"), l.ExpectedAt(time.Now()))
	sameGraph(t, "merged export --at "+mid.Format(time.RFC3339Nano), exportAt(t, dir, merged, mid.Format(time.RFC3339Nano)), l.ExpectedAt(mid))
}

// TestLiving_WarcNotModified: with --warc, a 304 is a revisit record of
// the server-not-modified profile, one per 304 the web sent, and the
// store's references to the records still check.
func TestLiving_WarcNotModified(t *testing.T) {
	t.Parallel()
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 4, Volatile: 0})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warc")
	r := weaver(t, dir, livingArgs(srv, db, "--delay", "0", "--revisit", "100ms", "--max-duration", "1500ms", "--warc", warcs, l.Seed())...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	sent := 0
	for _, s := range l.Served() {
		if s.Status == 304 {
			sent++
		}
	}
	files, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
	profiles := 0
	for _, f := range files {
		all := tooltest.Gunzip(t, f) // multistream: every record
		profiles += strings.Count(string(all), "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified")
	}
	if sent == 0 || profiles != sent {
		t.Errorf("%d server-not-modified revisit records, the web sent %d 304s", profiles, sent)
	}
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestLiving_Cluster: two shards crawl a changing web with a revisit
// policy, each revisiting the hosts it owns; the merged store holds every
// host's history (a crawl record per answer the web gave it) and answers
// --at as the web served, now and at a moment of the crawl.
func TestLiving_Cluster(t *testing.T) {
	t.Parallel()
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 8, Volatile: 3, Period: 400 * time.Millisecond})
	ns := startNATS(t)
	dir := t.TempDir()
	var dbs []string
	var procs []*shardProc
	for k := range 2 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		procs = append(procs, startShard(t, dir, nil, livingArgs(srv, db, "--delay", "0", "--revisit", "200ms",
			"--revisit-max", "1600ms", "--max-duration", "3s", "--cluster", ns.URL(), "--shard", fmt.Sprintf("%d/2", k), l.Seed())...))
	}
	waitShards(t, procs, time.Minute)
	served := l.Served()
	answers := map[string]int{}
	for _, s := range served {
		answers[s.Host]++
	}
	for k, db := range dbs {
		if m := metrics(t, db+".metrics"); m.TerminationReason != "max_duration" || m.Revisits == 0 {
			t.Errorf("shard %d: termination_reason %q, %d revisits", k, m.TerminationReason, m.Revisits)
		}
	}
	merged := mergeShards(t, dir, dbs)
	got := nodes(t, merged)
	for i := range 8 {
		h := l.Host(i)
		if answers[h] < 2 || got[h].CrawlCount != answers[h] {
			t.Errorf("%s: %d crawls merged, the web answered it %d times (want at least 2)", h, got[h].CrawlCount, answers[h])
		}
	}
	sameGraph(t, "merged export --at now", exportAt(t, dir, merged, "now"), l.ExpectedAt(time.Now()))
	mid := quietMoment(served)
	sameGraph(t, "merged export --at "+mid.Format(time.RFC3339Nano), exportAt(t, dir, merged, mid.Format(time.RFC3339Nano)), l.ExpectedAt(mid))
}
