package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// webMode is how a test's fake web is served: plain HTTP, or HTTPS (a CA
// made for the run, given to weaver with --ca-file) with plain HTTP on the
// same port redirecting to it. The key end-to-end tests run in both.
type webMode struct {
	name string
	tls  bool
}

var webModes = []webMode{{"http", false}, {"https", true}}

// start serves w in mode m for the test's lifetime and returns the server
// and the flags weaver needs to trust it.
func (m webMode) start(t *testing.T, w *fakeweb.Web) (*fakeweb.Server, []string) {
	t.Helper()
	if !m.tls {
		return startWeb(t, w), nil
	}
	srv, err := w.StartTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ca, err := srv.WriteCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return srv, []string{"--ca-file", ca}
}

// seed is w's seed URL in mode m: over TLS the seed is asked over https,
// and every other host is reached through its http link's redirect.
func (m webMode) seed(w *fakeweb.Web) string {
	if m.tls {
		return "https://" + strings.TrimPrefix(w.Seed(), "http://")
	}
	return w.Seed()
}

// checkTLSLog checks, for a crawl of a TLS web, that the pages came over
// TLS with HTTP/2 and that plain requests were only the redirects; it
// returns how many of each there were.
func checkTLSLog(t *testing.T, w *fakeweb.Web) (h2, redirects int) {
	t.Helper()
	for _, rq := range w.Requests() {
		switch {
		case rq.TLS && rq.Proto == "HTTP/2.0":
			h2++
		case rq.TLS:
			t.Errorf("%s%s over TLS with %s, want HTTP/2.0", rq.Host, rq.Path, rq.Proto)
		case rq.Status == 301:
			redirects++
		default:
			t.Errorf("%s%s: plain request answered %d", rq.Host, rq.Path, rq.Status)
		}
	}
	if h2 == 0 || redirects == 0 {
		t.Errorf("request log: %d HTTP/2 requests over TLS, %d http→https redirects; want both", h2, redirects)
	}
	return h2, redirects
}

// TestTLS_CertificateFaults: every certificate fault is named, by cause,
// on its node (last_error), in metrics.log's errors_by_type and in weaver
// status; a certificate refused is not retried; a stalled handshake is a
// timeout of its own kind; the healthy hosts are crawled.
func TestTLS_CertificateFaults(t *testing.T) {
	t.Parallel()
	faults := map[string]fakeweb.CertFault{
		"expired.test": fakeweb.CertExpired, "wrong.test": fakeweb.CertWrongName,
		"self.test": fakeweb.CertSelfSigned, "unknown.test": fakeweb.CertUnknownCA,
		"stall.test": fakeweb.HandshakeStall,
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 11, CertFaults: faults})
	srv, trust := webMode{"https", true}.start(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	args := append(trust, "--max-depth", "0", "--max-crawls-per-node", "1", "--timeout", "1s", "--retries", "1",
		w.Seed())
	want := map[string]string{
		"expired.test": "tls_expired", "wrong.test": "tls_wrong_name", "self.test": "tls_self_signed",
		"unknown.test": "tls_unknown_ca", "stall.test": "tls_timeout",
	}
	for h := range want {
		args = append(args, "https://"+h+"/")
	}
	r := weaver(t, dir, crawlArgs(srv, db, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	ns := nodes(t, db)
	mt := metrics(t, db+".metrics")
	for h, kind := range want {
		n := ns[h]
		if !strings.HasPrefix(n.Error, kind+": ") {
			t.Errorf("%s: last_error %q, want it to start %q", h, n.Error, kind+": ")
		}
		wantStatus := graph.StatusFetchError
		if kind == "tls_timeout" {
			wantStatus = graph.StatusTimeout
		}
		if n.Status != wantStatus || n.FailCount != 1 {
			t.Errorf("%s: status %s fail_count %d, want %s once", h, n.Status, n.FailCount, wantStatus)
		}
		if mt.ErrorsByType[kind] != 1 {
			t.Errorf("errors_by_type[%s] = %d, want 1 (%v)", kind, mt.ErrorsByType[kind], mt.ErrorsByType)
		}
	}
	// Certificates refused are not retried; the stall is, once.
	if mt.Retries != 1 {
		t.Errorf("retries %d, want 1 (the stalled handshake's)", mt.Retries)
	}
	if n := ns[w.Hosts()[0]]; n.Status != graph.StatusCrawled {
		t.Errorf("the seed: status %s (%s)", n.Status, n.Error)
	}
	// weaver status counts the failed nodes by cause.
	st := weaver(t, dir, "status", "--db", db)
	if st.code != 0 {
		t.Fatalf("status: exit %d\n%s", st.code, st.stderr)
	}
	line := ""
	for _, l := range strings.Split(st.stdout, "\n") {
		if strings.Contains(l, "failed by cause") {
			line = l
		}
	}
	for _, kind := range want {
		if !strings.Contains(line, kind+" 1") {
			t.Errorf("weaver status: %q does not count %s once:\n%s", line, kind, st.stdout)
		}
	}
}

// TestTLS_CAFile: without --ca-file a private CA's certificates are
// refused, named, with the advice to give it; a file with no certificate
// is refused at start, by name; the CA given in a config file works too.
func TestTLS_CAFile(t *testing.T) {
	t.Parallel()
	w := fakeweb.Loop3()
	srv, trust := webMode{"https", true}.start(t, w)
	dir := t.TempDir()
	seed := "https://a.test/"
	db := filepath.Join(dir, "none.bolt")
	r := weaver(t, dir, crawlArgs(srv, db, seed)...)
	if r.code != 1 || !strings.Contains(r.stderr, "tls_unknown_ca 1") || !strings.Contains(r.stderr, "--ca-file") {
		t.Errorf("untrusted CA: exit %d, want 1 naming tls_unknown_ca and --ca-file\n%s", r.code, r.stderr)
	}
	bad := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = weaver(t, dir, crawlArgs(srv, filepath.Join(dir, "bad.bolt"), "--ca-file", bad, seed)...)
	if r.code != 2 || !strings.Contains(r.stderr, "notes.txt") || !strings.Contains(r.stderr, "no PEM certificate") {
		t.Errorf("a CA file without a certificate: exit %d, want 2 naming the file\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.bolt")); err == nil {
		t.Error("a refused --ca-file still created the store")
	}
	conf := filepath.Join(dir, "crawl.json")
	data, _ := json.Marshal(map[string]any{"ca_file": trust[1]})
	if err := os.WriteFile(conf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "ok.bolt")
	if r := weaver(t, dir, crawlArgs(srv, db, "--config", conf, seed)...); r.code != 0 {
		t.Fatalf("ca_file in the config: exit %d\n%s", r.code, r.stderr)
	}
	want := map[[2]string]int{{"a.test", "b.test"}: 1, {"b.test", "c.test"}: 1, {"c.test", "a.test"}: 1} // one fetch of a host per crawl (issue 27)
	storetest.SameGraph(t, edges(t, db), want)
}

// TestDNS_Cache: with --dns-server, each name is asked once for its A and
// once for its AAAA records, although every host is connected to at least
// twice (http, then https after the redirect), robots.txt and page alike;
// a name that does not exist is asked once too.
func TestDNS_Cache(t *testing.T) {
	t.Parallel()
	w := fakeweb.Loop3()
	srv, trust := webMode{"https", true}.start(t, w)
	dns := startDNS(t, 300)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	port := strings.Split(srv.Addr(), ":")[1]
	args := append([]string{"crawl", "--db", db, "--metrics", db + ".metrics", "--dns-server", dns.addr(),
		"--connect-to", ":::" + port, "--allow-private-networks", "--delay", "0", "--quiet", "--retry-delay", "10ms"}, trust...)
	args = append(args, "http://a.test/", "http://nowhere.invalid/")
	r := weaver(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := map[[2]string]int{{"a.test", "b.test"}: 1, {"b.test", "c.test"}: 1, {"c.test", "a.test"}: 1} // one fetch of a host per crawl (issue 27)
	storetest.SameGraph(t, edges(t, db), want)
	if n := nodes(t, db)["nowhere.invalid"]; n.Status != graph.StatusDNSError {
		t.Errorf("nowhere.invalid: status %s (%s), want dns_error", n.Status, n.Error)
	}
	plain := 0
	for _, rq := range w.Requests() {
		if !rq.TLS {
			plain++
		}
	}
	if plain < 6 {
		t.Fatalf("only %d plain requests: the test did not make weaver connect twice per host", plain)
	}
	for _, h := range []string{"a.test", "b.test", "c.test", "nowhere.invalid"} {
		if n := dns.count(h); n != 2 {
			t.Errorf("%s asked %d times, want 2 (A and AAAA, once)", h, n)
		}
	}
}

// TestTLS_Insecure: without --insecure a refused certificate or an old
// server's TLS names --insecure in the host's error; with it, every such
// host is crawled, its links recorded, and the problem a verifying client
// refuses is on its node, in the exports and in weaver status.
func TestTLS_Insecure(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"expired.test": "tls_expired", "wrong.test": "tls_wrong_name", "self.test": "tls_self_signed",
		"unknown.test": "tls_unknown_ca", "legacy.test": "tls_legacy", "good.test": "",
	}
	faults := map[string]fakeweb.CertFault{
		"expired.test": fakeweb.CertExpired, "wrong.test": fakeweb.CertWrongName, "self.test": fakeweb.CertSelfSigned,
		"unknown.test": fakeweb.CertUnknownCA, "legacy.test": fakeweb.LegacyTLS,
	}
	scripts := map[string]fakeweb.Script{}
	var seeds []string
	for h := range want {
		scripts[h] = fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Body: `<title>` + h + `</title><a href="http://linked.test/">l</a>`}}}
		seeds = append(seeds, "https://"+h+"/")
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: scripts, CertFaults: faults})
	srv, trust := webMode{"https", true}.start(t, w)
	dir := t.TempDir()
	strict := filepath.Join(dir, "strict.bolt")
	if r := weaver(t, dir, append(crawlArgs(srv, strict, append(trust, "--max-depth", "0")...), seeds...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	for h, problem := range want {
		n := nodes(t, strict)[h]
		switch {
		case problem == "":
			if n.Status != graph.StatusCrawled {
				t.Errorf("%s without --insecure: %s (%s), want crawled", h, n.Status, n.Error)
			}
		case n.Status != graph.StatusFetchError || !strings.Contains(n.Error, "--insecure"):
			t.Errorf("%s without --insecure: %s, error %q: want a fetch_error that names --insecure", h, n.Status, n.Error)
		}
	}
	db := filepath.Join(dir, "insecure.bolt")
	if r := weaver(t, dir, append(crawlArgs(srv, db, append(trust, "--max-depth", "0", "--insecure")...), seeds...)...); r.code != 0 {
		t.Fatalf("crawl --insecure: exit %d\n%s", r.code, r.stderr)
	}
	ns := nodes(t, db)
	es := edges(t, db)
	for h, problem := range want {
		n := ns[h]
		if n.Status != graph.StatusCrawled || n.Title != h || n.TLSProblem != problem {
			t.Errorf("%s with --insecure: %s %q tls_problem %q (%s), want crawled, tls_problem %q", h, n.Status, n.Title, n.TLSProblem, n.Error, problem)
		}
		if es[[2]string{h, "linked.test"}] != 1 {
			t.Errorf("%s with --insecure: no edge to linked.test", h)
		}
	}
	sq := filepath.Join(dir, "i.db")
	if r := weaver(t, dir, "export", "--db", db, "--no-ranks", "--sqlite", sq); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	out, err := exec.Command(tooltest.Tool(t, "sqlite3"), sq, `SELECT n.domain_name, f.tls_problem FROM nodes n JOIN node_facts f USING (node_id)
		WHERE f.tls_problem IS NOT NULL ORDER BY 1`).CombinedOutput()
	if want := "expired.test|tls_expired\nlegacy.test|tls_legacy\nself.test|tls_self_signed\nunknown.test|tls_unknown_ca\nwrong.test|tls_wrong_name\n"; err != nil || string(out) != want {
		t.Errorf("sqlite3 on node_facts.tls_problem: %v\n%s\nwant\n%s", err, out, want)
	}
	st := weaver(t, dir, "status", "--db", db)
	if !strings.Contains(st.stdout, "TLS problems accepted") || !strings.Contains(st.stdout, "tls_legacy 1") {
		t.Errorf("weaver status does not count the TLS problems:\n%s", st.stdout)
	}
}
