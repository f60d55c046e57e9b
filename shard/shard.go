// Package shard says which shard of a weaver cluster owns a host. It is
// pure computation, shared by the crawl (package cluster) and by
// archive's merge, which must know a shard's own records from its stubs;
// with it go the names of the meta records of a shard's store that
// archive reads too.
package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
)

// Meta records of a cluster shard's store.
const (
	MetaSpec      = "cluster.shard"      // "K/N": the store is shard K of N
	MetaOutbox    = "cluster.outbox"     // entries in the outbox (counter)
	MetaOutboxSeq = "cluster.outbox_seq" // the last outbox sequence (counter)
)

// MaxShards bounds N: far past what one NATS stream serves well
// (docs/scale.md), and small enough that a typo is caught.
const MaxShards = 1024

// Spec is one shard of a cluster of N: K in [0, N).
type Spec struct {
	K, N int
}

// ErrSpec wraps every rejection of a "K/N" string.
var ErrSpec = errors.New("bad shard")

// Parse reads "K/N" (e.g. "0/3"): N shards in all, this one numbered K
// from 0.
func Parse(s string) (Spec, error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Spec{}, fmt.Errorf("%w %q: want K/N, e.g. 0/3 (shard 0 of 3)", ErrSpec, s)
	}
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 || n > MaxShards {
		return Spec{}, fmt.Errorf("%w %q: N must be a whole number from 1 to %d", ErrSpec, s, MaxShards)
	}
	k, err := strconv.Atoi(ks)
	if err != nil || k < 0 || k >= n {
		return Spec{}, fmt.Errorf("%w %q: K must be a whole number from 0 to %d (N-1)", ErrSpec, s, n-1)
	}
	return Spec{K: k, N: n}, nil
}

func (s Spec) String() string { return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N) }

// Owns reports whether shard s crawls host.
func (s Spec) Owns(host string) bool { return s.N <= 1 || Owner(host, s.N) == s.K }

// Owner returns the shard, of n, that owns host: the one whose hash with
// the host's registrable domain is highest (rendezvous hashing). Every
// host of one registrable domain has one owner, so that domain's
// politeness, robots.txt and subdomain cap are decided by one process;
// and were N to change, only the domains of the shards added or removed
// would move.
func Owner(host string, n int) int {
	if n <= 1 {
		return 0
	}
	d := graph.RegistrableDomain(host)
	h := fnv64(d)
	best, bestScore := 0, uint64(0)
	for k := range n {
		score := mix(h ^ mix(uint64(k)+0x9e3779b97f4a7c15))
		if k == 0 || score > bestScore {
			best, bestScore = k, score
		}
	}
	return best
}

// fnv64 is FNV-1a: the same on every platform and Go version.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix is splitmix64's finaliser: every input bit moves every output bit,
// which FNV alone does not do for the high bits.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
