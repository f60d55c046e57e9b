package crawl_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers_NoCluster checks that package crawl stays below package
// cluster (which imports crawl, and NATS): nothing of cluster nor of NATS
// is among crawl's dependencies; what both need (which shard owns a host)
// is package shard, a leaf below both.
func TestLayers_NoCluster(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "nats-io") || strings.HasPrefix(p, "github.com/weaver-crawler/weaver/cluster") {
			t.Errorf("crawl depends on %s: cluster is above crawl", p)
		}
	}
	out, err = exec.Command("go", "list", "-deps", "../shard").Output()
	if err != nil {
		t.Fatalf("go list ../shard: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "nats-io") || strings.HasPrefix(p, "github.com/weaver-crawler/weaver/crawl") ||
			strings.HasPrefix(p, "github.com/weaver-crawler/weaver/cluster") {
			t.Errorf("shard depends on %s: it must stay a leaf below crawl and cluster", p)
		}
	}
}
