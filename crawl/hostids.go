package crawl

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// hostIDs remembers the node ids of the hosts pages linked to, once the
// commits that looked them up or created them are durable: a host's id
// never changes, and most links of a crawl are to hosts it knows already,
// whose lookup in the hosts bucket was a sixth of a page's commit. Ids
// learned in a group that then fails are never added (see account). Hosts
// are kept by a 64-bit hash of their name, 16 bytes each, at most
// maxHostIDs of them (the first met): the node read by a remembered id is
// checked to be the host's (graph.GetHeadOf), and a host whose hash met
// another's is looked up as before.
type hostIDs struct {
	mu sync.RWMutex      // guards m
	m  map[uint64]uint64 // hash of the host → node id
}

// maxHostIDs bounds hostIDs: 262,144 hosts, about 5 MiB.
const maxHostIDs = 1 << 18

// hostSeed seeds the hash of hostIDs.
var hostSeed = maphash.MakeSeed()

// hostID is a host (by its hash) and its node's id, learned by a page's
// commit.
type hostID struct {
	key, id uint64
}

func (h *hostIDs) get(k uint64) (uint64, bool) {
	h.mu.RLock()
	id, ok := h.m[k]
	h.mu.RUnlock()
	return id, ok
}

// add remembers ids learned by a durable commit.
func (h *hostIDs) add(ids []hostID) {
	if len(ids) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[uint64]uint64, len(ids))
	}
	for _, l := range ids {
		if len(h.m) >= maxHostIDs {
			return
		}
		h.m[l.key] = l.id
	}
}

// ensureHead is graph.EnsureHeadAt for a page's link to host, without
// the hosts bucket when the host's id is known. A host it had to look up
// (or create) is added to p.hostIDs, to be remembered once the page's
// commit is durable (account); one it knew is not hashed again.
func (c *Crawler) ensureHead(tx *kv.Tx, p *page, host, scheme string, depth int, now time.Time) (graph.Head, bool, error) {
	k := maphash.String(hostSeed, host)
	if id, ok := c.hostIDs.get(k); ok {
		h, ok, err := graph.GetHeadOf(tx, id, host)
		if err != nil || ok {
			return h, false, err
		}
	}
	h, created, err := graph.EnsureHeadAt(tx, host, scheme, depth, now)
	if err == nil {
		p.hostIDs = append(p.hostIDs, hostID{k, h.ID})
	}
	return h, created, err
}
