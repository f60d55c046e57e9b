package shard_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weaver-crawler/weaver/shard"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want shard.Spec
		ok   bool
	}{
		{"0/3", shard.Spec{0, 3}, true}, {"2/3", shard.Spec{2, 3}, true}, {" 0/1 ", shard.Spec{0, 1}, true},
		{"3/3", shard.Spec{}, false}, {"-1/3", shard.Spec{}, false}, {"0/0", shard.Spec{}, false},
		{"1", shard.Spec{}, false}, {"a/3", shard.Spec{}, false}, {"0/x", shard.Spec{}, false},
		{"0/100000", shard.Spec{}, false}, {"", shard.Spec{}, false},
	} {
		got, err := shard.Parse(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, shard.ErrSpec) {
			t.Errorf("Parse(%q): %v is not ErrSpec", tc.in, err)
		}
	}
}

// TestOwner_Domain: every host of a registrable domain has one owner, and
// exactly one shard owns each host.
func TestOwner_Domain(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for i := range 200 {
			d := fmt.Sprintf("site%d.co.uk", i)
			o := shard.Owner(d, n)
			for _, h := range []string{"www." + d, "a.b." + d, d + ":8080"} {
				if got := shard.Owner(h, n); got != o {
					t.Fatalf("n=%d: %s owned by %d, %s by %d", n, d, o, h, got)
				}
			}
			owners := 0
			for k := range n {
				if (shard.Spec{K: k, N: n}).Owns("www." + d) {
					owners++
				}
			}
			if owners != 1 {
				t.Fatalf("n=%d: %d shards own www.%s", n, owners, d)
			}
		}
	}
}

// TestOwner_Balanced: 30,000 domains spread over 3 and 10 shards within
// 5 % of an even share, and going from 3 to 4 shards moves only the
// domains the new shard takes.
func TestOwner_Balanced(t *testing.T) {
	const domains = 30_000
	for _, n := range []int{3, 10} {
		count := make([]int, n)
		for i := range domains {
			count[shard.Owner(fmt.Sprintf("host%d.example%d.com", i, i), n)]++
		}
		for k, c := range count {
			if even := domains / n; c < even*95/100 || c > even*105/100 {
				t.Errorf("n=%d: shard %d owns %d of %d domains", n, k, c, domains)
			}
		}
	}
	for i := range domains {
		h := fmt.Sprintf("example%d.org", i)
		if a, b := shard.Owner(h, 3), shard.Owner(h, 4); a != b && b != 3 {
			t.Fatalf("%s moved from shard %d to %d when shard 3 was added", h, a, b)
		}
	}
}

// TestOwner_Stable pins the function: shard stores written by one weaver
// must be read the same by the next (a change here re-shards every
// cluster crawl under way).
func TestOwner_Stable(t *testing.T) {
	got := ""
	for _, h := range []string{"example.com", "www.bbc.co.uk", "a.github.io", "10.0.0.1", "localhost"} {
		got += fmt.Sprint(shard.Owner(h, 3), shard.Owner(h, 16), " ")
	}
	t.Log(got)
	if want := pinned; got != want {
		t.Errorf("owners changed: got %q, want %q", got, want)
	}
}

const pinned = "2 3 2 2 0 3 0 0 0 14 "
