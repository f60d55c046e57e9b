package crawl

import "time"

// Excluder exposes exclude_hosts matching to the external tests: it
// compiles patterns as New does and returns the host check.
func Excluder(patterns []string) (func(host string) bool, error) {
	x, err := newExcluder(patterns)
	if err != nil {
		return nil, err
	}
	return x.excluded, nil
}

// PrepareBatch and MetaRequeueNext expose Prepare's transaction size and
// its re-queue marker to the external tests.
const (
	PrepareBatch    = prepareBatch
	MetaRequeueNext = metaRequeueNext
)

// NotStored exposes the config keys a store does not remember.
var NotStored = notStored

// Netwatch exposes the outage rule to the external tests: pages are
// numbers, states are "up", "suspect" and "down".
type Netwatch struct{ w *netwatch }

// NewNetwatch returns a watch on the clock now.
func NewNetwatch(now func() time.Time) *Netwatch { return &Netwatch{newNetwatch(now)} }

func (n *Netwatch) Answered(host string) (charged []int) {
	ts, _ := n.w.answered("http", host, n.w.now())
	return pageNos(ts)
}
func (n *Netwatch) Failed(host string) { n.w.failed(host) }
func (n *Netwatch) Hold(no int) (held, pardon bool) {
	return n.w.hold(&task{pageNo: no, p: &page{}})
}

// Changed reports whether the dispatcher was told of a change since the
// last call.
func (n *Netwatch) Changed() bool {
	select {
	case <-n.w.changed:
		return true
	default:
		return false
	}
}
func (n *Netwatch) Suspect()               { n.w.suspect() }
func (n *Netwatch) Target() (string, bool) { return n.w.target() }
func (n *Netwatch) Unprobed() []int        { return pageNos(n.w.unprobed()) }
func (n *Netwatch) Probed(ok bool) (charged, pardoned []int, down bool) {
	c, p, d := n.w.probed(ok)
	return pageNos(c), pageNos(p), d
}
func (n *Netwatch) Restore(at time.Time, targets []string) { n.w.restore(at, targets) }
func (n *Netwatch) Wait() time.Duration                    { return n.w.wait() }
func (n *Netwatch) Run() int                               { return n.w.run() }
func (n *Netwatch) PausedSince() time.Time                 { return n.w.pausedSince() }
func (n *Netwatch) Figures() (int64, time.Duration, int64) { return n.w.figures() }
func (n *Netwatch) State() string {
	return [...]string{"up", "suspect", "down"}[n.w.current()]
}

func pageNos(ts []*task) []int {
	var out []int
	for _, t := range ts {
		out = append(out, t.pageNo)
	}
	return out
}

// SetDiskCheckEvery sets how often c looks at the free space, for tests
// that wait for room.
func SetDiskCheckEvery(c *Crawler, d time.Duration) { c.disk.every = d }
