package crawl_test

import (
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

// TestHistogram_Quantile_Rounded: a quantile is in 0.1 ms, without the
// interpolation's float noise (0.05 + 0.05*0.5 s is 75.00000000000001 ms).
func TestHistogram_Quantile_Rounded(t *testing.T) {
	cum := make([]uint64, len(crawl.FetchBuckets))
	for i, b := range crawl.FetchBuckets {
		if b >= 0.1 {
			cum[i] = 2
		}
	}
	cum[len(cum)-1] = 3
	h := crawl.Histogram{Cumulative: cum, Count: 3}
	for _, c := range []struct{ q, want float64 }{{0.5, 87.5}, {1.0 / 3, 75}, {0.9, 24000}, {0, 5}} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}
