package frontier_test

import (
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestDue_TakeDue_Order: hosts come out of the revisit schedule in the
// order they fall due (not in node order), only once due, each with its
// URL, and NextDue and TakeDue's next say when the next one falls due.
func TestDue_TakeDue_Order(t *testing.T) {
	s := storetest.MustOpen(t)
	err := s.Update(func(tx *kv.Tx) error {
		if got := frontier.NextDue(tx); !got.IsZero() {
			t.Errorf("empty schedule: NextDue got %v, want zero", got)
		}
		for _, d := range []struct {
			node uint64
			in   time.Duration
			url  string
		}{{3, 2 * time.Hour, ""}, {1, 3 * time.Hour, ""}, {2, time.Hour, "http://b.test/seed"}, {4, 4 * time.Hour, ""}} {
			if err := frontier.Schedule(tx, d.node, now.Add(d.in), d.url); err != nil {
				return err
			}
		}
		if got, want := frontier.NextDue(tx), now.Add(time.Hour); !got.Equal(want) {
			t.Errorf("NextDue: got %v, want %v", got, want)
		}
		due, next, err := frontier.TakeDue(tx, now.Add(2*time.Hour), 10)
		if err != nil {
			return err
		}
		want := []frontier.Due{{Node: 2, URL: "http://b.test/seed"}, {Node: 3}}
		if !slices.Equal(due, want) {
			t.Errorf("due: got %v, want %v", due, want)
		}
		if want := now.Add(3 * time.Hour); !next.Equal(want) {
			t.Errorf("next: got %v, want %v", next, want)
		}
		if due, _, err := frontier.TakeDue(tx, now.Add(2*time.Hour), 10); err != nil || len(due) != 0 {
			t.Errorf("taken twice: got %v, %v", due, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDue_TakeDue_Limit: a walk cut short by its limit says more may be
// due (next is now), and leaves them for the next take.
func TestDue_TakeDue_Limit(t *testing.T) {
	s := storetest.MustOpen(t)
	err := s.Update(func(tx *kv.Tx) error {
		for node := uint64(1); node <= 3; node++ {
			if err := frontier.Schedule(tx, node, now.Add(-time.Duration(node)*time.Minute), ""); err != nil {
				return err
			}
		}
		due, next, err := frontier.TakeDue(tx, now, 2)
		if err != nil {
			return err
		}
		if want := []frontier.Due{{Node: 3}, {Node: 2}}; !slices.Equal(due, want) {
			t.Errorf("due: got %v, want %v", due, want)
		}
		if want := now.Add(-time.Minute); !next.Equal(want) {
			t.Errorf("next: got %v, want %v (the one left, due already)", next, want)
		}
		due, next, err = frontier.TakeDue(tx, now, 1)
		if err != nil {
			return err
		}
		if want := []frontier.Due{{Node: 1}}; !slices.Equal(due, want) || !next.Equal(now) {
			t.Errorf("last: got %v, next %v; want %v, next now (the limit stopped the walk)", due, next, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDue_Unschedule: a host taken out of the schedule is never due, and
// a key of another layout is dropped by the take that meets it.
func TestDue_Unschedule(t *testing.T) {
	s := storetest.MustOpen(t)
	err := s.Update(func(tx *kv.Tx) error {
		if err := frontier.Schedule(tx, 1, now.Add(-time.Hour), ""); err != nil {
			return err
		}
		if err := frontier.Schedule(tx, 2, now.Add(-time.Minute), ""); err != nil {
			return err
		}
		if err := frontier.Unschedule(tx, 1, now.Add(-time.Hour)); err != nil {
			return err
		}
		if err := tx.PutRaw(kv.BucketDue, []byte{0}, []byte{}); err != nil {
			return err
		}
		due, next, err := frontier.TakeDue(tx, now, 10)
		if err != nil {
			return err
		}
		if want := []frontier.Due{{Node: 2}}; !slices.Equal(due, want) || !next.IsZero() {
			t.Errorf("got %v, next %v; want %v, next zero", due, next, want)
		}
		if k, _ := tx.Cursor(kv.BucketDue).First(); k != nil {
			t.Errorf("schedule holds %x after the take, want nothing", k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
