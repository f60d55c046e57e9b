package ingest

import (
	"testing"
	"time"
)

// TestMerger_Late: a pass is deferred to the last one only when, at the
// rates measured so far, it would outlast the rest of the input.
func TestMerger_Late(t *testing.T) {
	m := &merger{began: time.Now().Add(-10 * time.Second)}
	if m.late(1 << 40) {
		t.Error("late before any pass was timed")
	}
	m.passRate = 100_000 // edges a second
	if m.late(1 << 40) {
		t.Error("late before the writer applied anything")
	}
	// 1,000 bytes applied in 10 s, 300 left: about 3 s of input left.
	m.input(300, 1000)
	for _, c := range []struct {
		edges int64
		want  bool
	}{
		{100_000, false}, // 1 s
		{250_000, false}, // 2.5 s
		{400_000, true},  // 4 s
		{5_000_000, true},
	} {
		if got := m.late(c.edges); got != c.want {
			t.Errorf("late(%d edges) = %v with 3 s of input left at 100,000 edges a second, want %v", c.edges, got, c.want)
		}
	}
	m.input(0, 0)
	if !m.late(1) {
		t.Error("not late with no input left")
	}
}
