package export

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

func TestTimeText(t *testing.T) {
	var c timeText
	if got := c.null(time.Time{}); got != nil {
		t.Errorf("zero time: got %v, want NULL", got)
	}
	paris := time.FixedZone("CET", 3600)
	for _, tm := range []time.Time{
		time.Date(2025, 1, 16, 10, 0, 0, 0, time.UTC),
		time.Date(2025, 1, 16, 10, 0, 0, 999_999_999, time.UTC), // same second: from the cache
		time.Date(2025, 1, 16, 0, 30, 5, 0, paris),              // converted to UTC: the day before
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, want := c.null(tm), sqlTime(tm); got != want {
			t.Errorf("%v: got %v, want %q", tm, got, want)
		}
	}
}

// rssFileKB reads how much of this process's RSS is file-backed.
func rssFileKB(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestPageReleaser checks that releasing the store's pages in the middle
// of a read transaction lowers the RSS and leaves the data readable.
func TestPageReleaser(t *testing.T) {
	s := storetest.MustOpen(t)
	now := time.Date(2025, 1, 16, 10, 0, 0, 0, time.UTC)
	big := strings.Repeat("x", 8000)
	err := s.Update(func(tx *kv.Tx) error {
		for i := range 4000 { // about 32 MB of titles
			n, _, err := graph.Ensure(tx, "h"+strconv.Itoa(i)+".example", "https", now)
			if err != nil {
				return err
			}
			n.Title = big
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(tx *kv.Tx) int {
		count := 0
		if err := graph.ForEachNode(tx, func(n *graph.Node) error {
			if n.Title == big {
				count++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return count
	}
	err = s.View(func(tx *kv.Tx) error {
		read(tx)
		before := rssFileKB(t)
		tx.ReleasePages()
		after := rssFileKB(t)
		t.Logf("RssFile %d kB after reading the store, %d kB after release", before, after)
		if before-after < 16_000 {
			t.Errorf("release freed %d kB of RSS, want most of the 32 MB read", before-after)
		}
		if n := read(tx); n != 4000 {
			t.Errorf("after release, %d nodes read back intact, want 4000", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
