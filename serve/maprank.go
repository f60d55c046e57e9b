package serve

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/rank"
)

// The live map sizes hosts by PageRank as the exports do, so map/data
// answers, when asked with ranks=1, carry the ranks of every host:
//
//	"ranks": [[id, pagerank, harmonic], ...]
//
// Ranks are a computation over the whole graph (package rank: seconds on
// a big one), which a crawl that polls every 1.5 s cannot pay each time:
// a computation is kept and shared by every request until the graph has
// changed (its counts differ) and it is older than rankMinAge and twenty
// times what it cost, so the map costs a running crawl at most a
// twentieth of a core. Between two computations hosts found since have no
// rank yet; the page shows them small.

// rankMinAge is the least time between two rank computations.
const rankMinAge = 5 * time.Second

// mapRanks is one store's ranks for its map.
type mapRanks struct {
	mu     sync.Mutex // guards the fields below; held while computing, so requests wait for one computation
	at     time.Time
	cost   time.Duration
	counts graph.Counts
	body   []byte // the ranks as a JSON array
}

// errUnchanged ends a read that found the graph as it was ranked.
var errUnchanged = errors.New("unchanged")

// get returns the ranks of s's graph as a JSON array, computing them when
// the ones kept are stale. It returns the store's, rank's or the
// context's error.
func (r *mapRanks) get(ctx context.Context, s *kv.Store) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.body != nil && now.Sub(r.at) < max(rankMinAge, 20*r.cost) {
		return r.body, nil
	}
	var counts graph.Counts
	var g *rank.Graph
	err := s.View(func(tx *kv.Tx) error {
		counts = graph.GetCounts(tx)
		if r.body != nil && counts == r.counts {
			return errUnchanged
		}
		var err error
		g, err = rank.Load(ctx, tx)
		return err
	})
	if errors.Is(err, errUnchanged) {
		r.at = now
		return r.body, nil
	}
	if err != nil {
		return nil, err
	}
	// One worker for the exact harmonic centrality: the crawl comes first.
	rs, err := rank.Compute(ctx, g, rank.Options{Harmonic: rank.HarmonicOptions{Workers: 1}})
	if err != nil {
		return nil, fmt.Errorf("ranking the graph: %w", err)
	}
	b := make([]byte, 0, 48*g.Len()+2)
	b = append(b, '[')
	for i := range g.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendUint(b, g.ID(i), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, rs.PageRank[i], 'g', 6, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, rs.Harmonic[i], 'g', 6, 64)
		b = append(b, ']')
	}
	b = append(b, ']')
	r.body, r.at, r.cost, r.counts = b, now, time.Since(now), counts
	return r.body, nil
}

// jobRanks keeps the ranks of each job's map.
type jobRanks struct {
	mu   sync.Mutex // guards byID
	byID map[string]*mapRanks
}

func (j *jobRanks) of(id string) *mapRanks {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.byID == nil {
		j.byID = map[string]*mapRanks{}
	}
	r, ok := j.byID[id]
	if !ok {
		r = &mapRanks{}
		j.byID[id] = r
	}
	return r
}
