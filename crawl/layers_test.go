package crawl_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers_NoCluster checks that package crawl stays below package
// cluster (which imports crawl, and NATS): of cluster's packages only the
// leaf cluster/shard (pure computation on host names) may be among
// crawl's dependencies, and nothing of NATS.
func TestLayers_NoCluster(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go tool where the test binary runs
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case strings.Contains(p, "nats-io"):
			t.Errorf("crawl depends on %s", p)
		case strings.HasPrefix(p, "github.com/weaver-crawler/weaver/cluster") && p != "github.com/weaver-crawler/weaver/cluster/shard":
			t.Errorf("crawl depends on %s: cluster is above crawl", p)
		}
	}
	out, err = exec.Command("go", "list", "-deps", "../cluster/shard").Output()
	if err != nil {
		t.Fatalf("go list ../cluster/shard: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "nats-io") || strings.HasPrefix(p, "github.com/weaver-crawler/weaver/crawl") ||
			(strings.HasPrefix(p, "github.com/weaver-crawler/weaver/cluster") && p != "github.com/weaver-crawler/weaver/cluster/shard") {
			t.Errorf("cluster/shard depends on %s: it must stay a leaf below crawl", p)
		}
	}
}
