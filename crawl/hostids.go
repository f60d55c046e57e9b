package crawl

import (
	"fmt"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// hostIDs remembers the node ids of the hosts pages linked to, once the
// commits that looked them up or created them are durable: a host's id
// never changes, and most links of a crawl are to hosts it knows already,
// whose lookup in the hosts bucket was a sixth of a page's commit. Ids
// learned in a group that then fails are never added (see account). It
// keeps at most maxHostIDs hosts (about 15 MiB), the first it met.
type hostIDs struct {
	mu sync.RWMutex      // guards m
	m  map[string]uint64 // host → node id
}

// maxHostIDs bounds hostIDs.
const maxHostIDs = 1 << 18

// hostID is a host and its node's id, learned by a page's commit.
type hostID struct {
	host string
	id   uint64
}

func (h *hostIDs) get(host string) (uint64, bool) {
	h.mu.RLock()
	id, ok := h.m[host]
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
		h.m = make(map[string]uint64, len(ids))
	}
	for _, l := range ids {
		if len(h.m) >= maxHostIDs {
			return
		}
		h.m[l.host] = l.id
	}
}

// ensureHead is graph.EnsureHeadAt for a page's link to host, without
// the hosts bucket when the host's id is known.
func (c *Crawler) ensureHead(tx *kv.Tx, host, scheme string, depth int, now time.Time) (graph.Head, bool, error) {
	id, ok := c.hostIDs.get(host)
	if !ok {
		return graph.EnsureHeadAt(tx, host, scheme, depth, now)
	}
	h, ok, err := graph.GetHead(tx, id)
	if err == nil && !ok {
		err = fmt.Errorf("crawl: host %q's node %d is missing: %w", host, id, graph.ErrInconsistent)
	}
	return h, false, err
}
