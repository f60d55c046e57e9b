package crawl

import (
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// TestHistogram_Quantiles: the percentiles are the fetch times at their
// rank within the sketch's accuracy, whatever the buckets: 1,000 fetches
// of 200 ms to 2.2 s (every one above the 100–250 ms bucket's interpolation
// that reported a p50 of 175 ms for a web answering in 200 ms).
func TestHistogram_Quantiles(t *testing.T) {
	var h histogram
	if got := h.quantiles(0.5); got[0] != 0 {
		t.Errorf("before any fetch: p50 %v, want 0", got[0])
	}
	r := rand.New(rand.NewSource(1))
	var ms []float64
	for range 1000 {
		d := 200*time.Millisecond + time.Duration(r.ExpFloat64()*float64(300*time.Millisecond))
		d = min(d, 2200*time.Millisecond)
		h.observe(d)
		ms = append(ms, float64(d)/float64(time.Millisecond))
	}
	slices.Sort(ms)
	qs := []float64{0, 0.5, 0.9, 0.99, 1}
	for i, got := range h.quantiles(qs...) {
		want := ms[int(qs[i]*float64(len(ms)-1))]
		if math.Abs(got-want) > sketchAccuracy*want+0.05 {
			t.Errorf("p%v: %v ms, want %v within %.1f %%", 100*qs[i], got, want, 100*sketchAccuracy)
		}
		if got < 199.9 {
			t.Errorf("p%v: %v ms, under the fastest fetch", 100*qs[i], got)
		}
	}
}
