package graph_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// limiterModel is the subdomain limiter's meaning: the admitted hosts of
// each domain.
type limiterModel map[string][]string

func (m limiterModel) admit(domain, host string, max int) bool {
	hosts := m[domain]
	if slices.Contains(hosts, host) {
		return true
	}
	if max > 0 && len(hosts) >= max {
		return false
	}
	m[domain] = append(hosts, host)
	return true
}

func (m limiterModel) unadmit(domain, host string) {
	if i := slices.Index(m[domain], host); i >= 0 {
		m[domain] = slices.Delete(m[domain], i, i+1)
	}
}

func (m limiterModel) clone() limiterModel {
	c := limiterModel{}
	for d, h := range m {
		c[d] = slices.Clone(h)
	}
	return c
}

// TestLimiter_AsTheModel: a Limiter that folds its log every 3 admissions
// admits what the model admits, for hosts arriving in random order under
// domains whose names sort around each other, with caps of 0 to 3, some
// taken back (Unadmit), over many transactions of which some fail. After
// each transaction, the Limiter, a Limiter loaded again from the store, and
// the store's functions (which load the log for each call) all list each
// domain's hosts as the model does.
func TestLimiter_AsTheModel(t *testing.T) {
	r := rand.New(rand.NewPCG(54, 7))
	labels := []string{"", "a", "b", "m", "www", "zz", "a-b", "a.b"}
	domains := []string{"a.test", "b.test", "ab.test", "a.co.uk", "b.co.uk"}
	errFail := errors.New("this transaction fails")
	for max := range 4 {
		s := storetest.MustOpen(t)
		var lim *graph.Limiter
		model := limiterModel{}
		folds := 0
		for txn := range 60 {
			fail := txn%5 == 4
			next := model.clone()
			err := s.Update(func(tx *kv.Tx) error {
				if lim == nil {
					l, err := graph.LoadLimiter(tx)
					if err != nil {
						return err
					}
					graph.SetFoldAt(l, 3)
					lim = l
				}
				for range 1 + r.IntN(12) {
					d := domains[r.IntN(len(domains))]
					host := d
					if l := labels[r.IntN(len(labels))]; l != "" {
						host = l + "." + d
					}
					if r.IntN(6) == 0 {
						if err := lim.Unadmit(tx, host); err != nil {
							return err
						}
						next.unadmit(d, host)
						continue
					}
					before := lim.Logged()
					got, err := lim.Admit(tx, host, max)
					if err != nil {
						return err
					}
					if lim.Logged() < before {
						folds++
					}
					if want := next.admit(d, host, max); got != want {
						return fmt.Errorf("cap %d, %s with %v admitted: got %v, want %v", max, host, next[d], got, want)
					}
				}
				if fail {
					return errFail
				}
				return nil
			})
			if fail && !errors.Is(err, errFail) || !fail && err != nil {
				t.Fatalf("cap %d, transaction %d: %v", max, txn, err)
			}
			if !fail {
				model = next
			}
			err = s.Update(func(tx *kv.Tx) error {
				again, err := graph.LoadLimiter(tx)
				if err != nil {
					return err
				}
				if again.Logged() != lim.Logged() {
					return fmt.Errorf("the log holds %d admissions, the Limiter %d", again.Logged(), lim.Logged())
				}
				for _, d := range domains {
					want := slices.Sorted(slices.Values(model[d]))
					for name, got := range map[string][]string{"Limiter": lim.Subdomains(tx, d), "loaded again": again.Subdomains(tx, d), "Subdomains": graph.Subdomains(tx, d)} {
						if !slices.Equal(got, want) && len(got)+len(want) > 0 {
							return fmt.Errorf("%s: %s has %q, want %q", name, d, got, want)
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("cap %d, after transaction %d (failed: %v): %v", max, txn, fail, err)
			}
		}
		if folds == 0 {
			t.Errorf("cap %d: the log was never folded", max)
		}
		err := s.Update(func(tx *kv.Tx) error { return lim.Fold(tx) })
		if err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *kv.Tx) error {
			if n := tx.Len(kv.BucketRootLog); n != 0 {
				t.Errorf("cap %d: %d admissions in the log after Fold", max, n)
			}
			return nil
		})
	}
}

// TestLimiter_BadLog: a log entry that is not a domain's host is an error
// that says so, not a panic.
func TestLimiter_BadLog(t *testing.T) {
	s := storetest.MustOpen(t)
	if err := s.Update(func(tx *kv.Tx) error { return tx.PutRaw(kv.BucketRootLog, kv.U64(1), []byte("no separator")) }); err != nil {
		t.Fatal(err)
	}
	err := s.View(func(tx *kv.Tx) error {
		_, err := graph.LoadLimiter(tx)
		return err
	})
	if !errors.Is(err, graph.ErrInconsistent) {
		t.Fatalf("got %v, want ErrInconsistent", err)
	}
	err = s.View(graph.Check)
	if err == nil || !strings.Contains(err.Error(), "roots log entry 1") {
		t.Fatalf("Check: %v, want the log's entry named", err)
	}
	// The store is left as Check found it; MustOpen's cleanup checks too.
	if err := s.Update(func(tx *kv.Tx) error { return tx.Delete(kv.BucketRootLog, kv.U64(1)) }); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkLimiterAdmit: a host's first admission, in transactions of 400
// (a crawl's group of about 50 pages of a web still being discovered),
// with the log folded every foldAt admissions as a crawl's is, against
// the roots bucket alone (graph.AdmitSubdomain before schema 5 put each
// key there). go test ./graph -run '^$' -bench LimiterAdmit -benchtime 200000x
func BenchmarkLimiterAdmit(b *testing.B) {
	s, err := kv.Open(filepath.Join(b.TempDir(), "l.bolt"), kv.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	hosts := make([]string, b.N)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("www.site-%d.example-%d.com", r.Uint32(), r.IntN(1<<20))
	}
	var lim *graph.Limiter
	b.ResetTimer()
	for i := 0; i < b.N; i += 400 {
		err := s.Update(func(tx *kv.Tx) error {
			if lim == nil {
				l, err := graph.LoadLimiter(tx)
				if err != nil {
					return err
				}
				lim = l
			}
			for _, h := range hosts[i:min(i+400, b.N)] {
				if _, err := lim.Admit(tx, h, 3); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
