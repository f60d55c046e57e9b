package fakeweb_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// openWebgraph opens a file of the shared 1996 UK host graph, skipping the
// test when it is absent, except under CI where its absence is a failure.
func openWebgraph(t *testing.T, name string) *os.File {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "data", "webgraph", name)
	f, err := os.Open(path)
	if err != nil {
		tooltest.Missing(t, "open %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFromEdges_UK1996AcUk(t *testing.T) {
	w, err := fakeweb.FromEdges(openWebgraph(t, "uk1996-ac-uk-subgraph.tsv"), fakeweb.Config{})
	if err != nil {
		t.Fatalf("FromEdges: %v", err)
	}
	hosts := w.Hosts()
	if n := len(hosts); n < 1200 || n > 1260 {
		t.Errorf("hosts: got %d, want 1,260 less malformed ones (%d lines)", n, w.Malformed())
	}
	if got, want := w.Seed(), "http://phoenix.doc.ic.ac.uk/"; got != want {
		t.Errorf("Seed: got %s, want %s (most out-links)", got, want)
	}
	if got := fakeweb.SelectHosts(hosts[0], "", w.Links(hosts[0]), 0, fakeweb.DefaultExcluded); len(got) != 153 {
		t.Errorf("seed: links to %d hosts, want 153", len(got))
	}
	index := map[string]bool{}
	for _, h := range hosts {
		index[h] = true
	}
	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	if len(edges) < 100 {
		t.Errorf("ExpectedEdges: %d edges", len(edges))
	}
	for e := range edges {
		if !index[e[0]] || !index[e[1]] {
			t.Errorf("edge %v: endpoint not in Hosts", e)
		}
	}
	if rec := serve(w, w.Seed()); rec.Code != 200 || !strings.Contains(rec.Body.String(), "http://") {
		t.Errorf("seed page: status %d", rec.Code)
	}
}

func TestFromEdges_UK1996Crawled(t *testing.T) {
	w, err := fakeweb.FromEdges(openWebgraph(t, "uk1996-crawled-subgraph.tsv"), fakeweb.Config{})
	if err != nil {
		t.Fatalf("FromEdges: %v", err)
	}
	if n := len(w.Hosts()); n < 5000 || n > 5060 {
		t.Errorf("hosts: got %d, want about 5,060", n)
	}
	if got, want := w.Seed(), "http://www.netlink.co.uk/"; got != want {
		t.Errorf("Seed: got %s, want %s", got, want)
	}
}

func TestFromEdges_Parsing(t *testing.T) {
	input := strings.Join([]string{
		"# comment",
		"",
		"a.test\tc.test\t1",
		"a.test\tb.test\t5",
		"a.test\td.test\t5",
		"a.test\tc.test\t2", // a second line gives a second link
		"b.test\ta.test\t1\r",
		"c.test\t10.1.2.3\t1",
		"bad line",
		"a.test\tb.test\tx",
		"a.test\tb.test\t0",
		"a.test\tB.TEST\t1",
		"a.test\tb.test:80\t1",
		"a.test\ta.test\t3",
		"a.test\t-b.test\t1",
	}, "\n")
	w, err := fakeweb.FromEdges(strings.NewReader(input), fakeweb.Config{})
	if err != nil {
		t.Fatalf("FromEdges: %v", err)
	}
	if got, want := w.Malformed(), 7; got != want {
		t.Errorf("Malformed: got %d, want %d", got, want)
	}
	if got, want := w.Hosts(), []string{"a.test", "10.1.2.3", "b.test", "c.test", "d.test"}; !slices.Equal(got, want) {
		t.Errorf("Hosts: got %q, want %q", got, want)
	}
	var order []string
	for _, h := range w.Links("a.test") {
		for _, t := range []string{"b.test", "c.test", "d.test"} {
			if strings.Contains(strings.ToLower(h), "//"+t) {
				order = append(order, t)
			}
		}
	}
	if want := []string{"b.test", "d.test", "c.test", "c.test"}; !slices.Equal(order, want) {
		t.Errorf("a.test links: got %q, want %q (weight desc, then name)", order, want)
	}
	want := map[[2]string]int{
		{"a.test", "b.test"}: 1, {"a.test", "d.test"}: 1, {"a.test", "c.test"}: 1,
		{"b.test", "a.test"}: 1, {"c.test", "10.1.2.3"}: 1,
	}
	if got := w.ExpectedEdges(10, fakeweb.DefaultExcluded); !maps.Equal(got, want) {
		t.Errorf("ExpectedEdges: got %v, want %v", got, want)
	}

	if _, err := fakeweb.FromEdges(strings.NewReader("# nothing\nbad\n"), fakeweb.Config{}); !errors.Is(err, fakeweb.ErrNoEdges) {
		t.Errorf("FromEdges(no edges): got %v, want ErrNoEdges", err)
	}
	if _, err := fakeweb.FromEdges(errReader{}, fakeweb.Config{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("FromEdges(failing reader): got %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }
