package e2e_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestSpool_NoSpace: /snapshot and /graph are written to a spool file
// beside the store before they are sent (so a slow client holds no read
// transaction). On a disk without the room the crawl keeps for its own
// growth, the download is refused with 507 and a JSON error, the crawl
// goes on, nothing is left on the disk, and the store stays consistent.
func TestSpool_NoSpace(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 50, Seed: 5, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"slow-a.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.Mkdir(small, 0o755)
	mountTmpfs(t, small, "16m") // under the 64 MiB every download leaves free
	db := filepath.Join(small, "w.bolt")
	args := []string{"crawl", "--db", db, "--metrics", filepath.Join(dir, "metrics.log"), "--connect-to", srv.ConnectTo(),
		"--delay", "0", "--quiet", "--listen", "127.0.0.1:0", "--workers", "2", "--max-outbound-links", "1",
		"--max-crawls-per-node", "1", "--ignore-robots", "--timeout", "20s", "--retries", "0"}
	p := start(t, dir, append(args, w.Seed())...)
	base := listenAPI(t, p, db).base

	for _, path := range []string{"/snapshot", "/graph?format=graphml"} {
		code, body, _ := request(t, nil, "GET", base+path, nil, "")
		if code != http.StatusInsufficientStorage || !strings.Contains(body, `"error"`) || !strings.Contains(body, "free") {
			t.Errorf("GET %s on a full disk: %d %q, want 507 and a JSON error naming the free space", path, code, body)
		}
	}
	if code, body, _ := request(t, nil, "GET", base+"/status", nil, ""); code != http.StatusOK {
		t.Errorf("GET /status after refused downloads: %d %q", code, body)
	}
	if code, _, _ := request(t, nil, "POST", base+"/stop", nil, ""); code != http.StatusAccepted {
		t.Errorf("POST /stop: %d, want 202", code)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d after refused downloads:\n%s", code, p.out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(small, ".*download*")); len(left) > 0 {
		t.Errorf("spool files left on the store's disk: %v", left)
	}
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := storetest.CheckAll(s); err != nil {
		t.Errorf("store inconsistent: %v", err)
	}
}
