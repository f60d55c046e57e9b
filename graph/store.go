package graph

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// Meta counters graph keeps so that counts never need a scan.
const (
	counterNodes  = "graph.nodes"
	counterEdges  = "graph.edges"
	counterWeight = "graph.weight"
	counterNextID = "graph.next_id"
)

// Counts are the graph's sizes, kept up to date by every write.
type Counts struct {
	Nodes  uint64 `json:"nodes"`
	Edges  uint64 `json:"edges"`
	Weight uint64 `json:"total_weight"`
}

// GetCounts returns the node, edge and total weight counters.
func GetCounts(tx *kv.Tx) Counts {
	return Counts{
		Nodes:  tx.Counter(counterNodes),
		Edges:  tx.Counter(counterEdges),
		Weight: tx.Counter(counterWeight),
	}
}

// Lookup returns the id of host, which must already be normalised.
func Lookup(tx *kv.Tx, host string) (uint64, bool) {
	v := tx.GetRaw(kv.BucketHosts, []byte(host))
	if len(v) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(v), true
}

// Get returns the node with id. It returns a decoding error for a damaged
// record.
func Get(tx *kv.Tx, id uint64) (Node, bool, error) {
	var n Node
	key := kv.U64(id)
	v := tx.GetRaw(kv.BucketNodes, key)
	if v == nil {
		return Node{}, false, nil
	}
	if err := DecodeNode(key, v, &n); err != nil {
		return Node{}, false, fmt.Errorf("graph: node %d: %w", id, err)
	}
	return n, true, nil
}

// GetByHost returns the node of a normalised host.
func GetByHost(tx *kv.Tx, host string) (Node, bool, error) {
	id, ok := Lookup(tx, host)
	if !ok {
		return Node{}, false, nil
	}
	return Get(tx, id)
}

// Put writes n, which must carry the id Ensure gave it.
func Put(tx *kv.Tx, n *Node) error {
	if n.ID == 0 {
		return fmt.Errorf("graph: put %q: %w", n.Host, ErrNoID)
	}
	if err := tx.PutRaw(kv.BucketNodes, kv.U64(n.ID), appendNode(make([]byte, 0, n.sizeHint()), n)); err != nil {
		return fmt.Errorf("graph: put %q: %w", n.Host, err)
	}
	return nil
}

// Ensure returns the node of host, creating it as discovered (with the next
// id, its registrable domain and first-seen time now) when it is new. host
// must be normalised; scheme is how it was found. It reports whether the
// node was created.
func Ensure(tx *kv.Tx, host, scheme string, now time.Time) (Node, bool, error) {
	return EnsureAt(tx, host, scheme, 0, now)
}

// EnsureAt is Ensure for a host first seen at depth: a new node is written
// once, already at its depth.
func EnsureAt(tx *kv.Tx, host, scheme string, depth int, now time.Time) (Node, bool, error) {
	if id, ok := Lookup(tx, host); ok {
		n, ok, err := Get(tx, id)
		if err != nil {
			return Node{}, false, err
		}
		if !ok {
			return Node{}, false, fmt.Errorf("graph: host %q points at missing node %d: %w", host, id, ErrInconsistent)
		}
		return n, false, nil
	}
	return create(tx, host, scheme, depth, now)
}

// EnsureID is EnsureAt for a caller that needs only the node's id: a host
// already known costs one lookup, a new one its creation.
func EnsureID(tx *kv.Tx, host, scheme string, depth int, now time.Time) (uint64, bool, error) {
	if id, ok := Lookup(tx, host); ok {
		return id, false, nil
	}
	n, created, err := create(tx, host, scheme, depth, now)
	return n.ID, created, err
}

// CreateID is EnsureID for a host the caller knows has no node (the
// import's filter of the hosts a store holds): it makes the node without
// looking the host up first. A host that had a node would get a second
// one, its name then pointing at the new one only; Check reports the
// first as not indexed by its host.
func CreateID(tx *kv.Tx, host, scheme string, depth int, now time.Time) (uint64, error) {
	n, _, err := create(tx, host, scheme, depth, now)
	return n.ID, err
}

// create is EnsureAt for a host Lookup did not find.
func create(tx *kv.Tx, host, scheme string, depth int, now time.Time) (Node, bool, error) {
	if host == "" {
		return Node{}, false, ErrEmptyHost
	}
	id, err := tx.AddCounter(counterNextID, 1)
	if err != nil {
		return Node{}, false, err
	}
	n := Node{
		ID: id, Host: host, Domain: RegistrableDomain(host), Scheme: scheme,
		Status: StatusDiscovered, FirstSeen: now, LastSeen: now, Depth: depth,
	}
	if err := tx.PutLater(kv.BucketHosts, []byte(host), kv.U64(id)); err != nil {
		return Node{}, false, err
	}
	if err := Put(tx, &n); err != nil {
		return Node{}, false, err
	}
	if _, err := tx.AddCounter(counterNodes, 1); err != nil {
		return Node{}, false, err
	}
	return n, true, nil
}

func edgeKey(from, to uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, from)
	binary.BigEndian.PutUint64(k[8:], to)
	return k
}

// AddEdge adds w to the weight of the edge from→to, creating it (first
// seen now) when new, and keeps the edge and weight counters. It is
// AddEdgeFacts without link facts.
func AddEdge(tx *kv.Tx, from, to, w uint64, now time.Time) error {
	return AddEdgeFacts(tx, from, to, w, 0, 0, now)
}

// AddEdgeFacts is AddEdge that also adds to the edge's link facts:
// nofollow of the w pages linked to "to" only with rel nofollow, ugc or
// sponsored, and redirect of them were redirects to it rather than links.
// An edge that never gets facts is stored as before facts existed, at the
// same cost. It returns ErrBadFacts when nofollow or redirect exceeds w
// (the facts count pages among the weight's), and the store's errors.
func AddEdgeFacts(tx *kv.Tx, from, to, w, nofollow, redirect uint64, now time.Time) error {
	if nofollow > w || redirect > w {
		return fmt.Errorf("graph: edge %d→%d: %w: weight %d, nofollow %d, redirect %d", from, to, ErrBadFacts, w, nofollow, redirect)
	}
	k := edgeKey(from, to)
	var e Edge
	ok, err := tx.Get(kv.BucketEdges, k, &e)
	if err != nil {
		return fmt.Errorf("graph: edge %d→%d: %w", from, to, err)
	}
	if !ok {
		e.FirstSeen = now
		if _, err := tx.AddCounter(counterEdges, 1); err != nil {
			return err
		}
	}
	e.Weight += w
	e.Nofollow += nofollow
	e.Redirect += redirect
	e.LastSeen = now
	if err := tx.Put(kv.BucketEdges, k, &e); err != nil {
		return fmt.Errorf("graph: edge %d→%d: %w", from, to, err)
	}
	_, err = tx.AddCounter(counterWeight, int64(w))
	return err
}

// checkFacts returns ErrBadFacts when the pages an edge's link facts
// count (nofollow, redirect, frame) exceed its weight w.
func checkFacts(from, to, w, nofollow, redirect, frame uint64) error {
	if nofollow > w || redirect > w || frame > w {
		return fmt.Errorf("graph: edge %d→%d: %w: weight %d, nofollow %d, redirect %d, frame %d", from, to, ErrBadFacts, w, nofollow, redirect, frame)
	}
	return nil
}

// EdgeAdd is one edge of AddEdges: w more to the weight of from→To, with
// its link facts (see AddEdgeFacts).
type EdgeAdd struct {
	To, Weight, Nofollow, Redirect uint64
	Frame                          uint64 // of Weight, pages that showed To in a frame (Edge.Frame)
}

// AddEdges is AddEdgeFacts for every edge of adds, all leaving from: a
// page's out-links in one call. It sorts adds by To (in place) and writes
// the edges in key order, reads the edges from already has with one cursor
// walk instead of a lookup per edge, and encodes without reflection. The
// store ends as AddEdgeFacts called for each would leave it (two adds of
// one To add up).
func AddEdges(tx *kv.Tx, from uint64, adds []EdgeAdd, now time.Time) error {
	if len(adds) == 0 {
		return nil
	}
	for _, a := range adds {
		if err := checkFacts(from, a.To, a.Weight, a.Nofollow, a.Redirect, a.Frame); err != nil {
			return err
		}
	}
	slices.SortFunc(adds, func(a, b EdgeAdd) int { return cmp.Compare(a.To, b.To) })
	adds = mergeAdds(adds)
	// The edges from already has, found by walking its key range once
	// (a first crawl of a host has none: one Seek).
	type old struct {
		i int
		e Edge
	}
	var olds []old
	c := tx.Cursor(kv.BucketEdges)
	prefix := kv.U64(from)
	i := 0
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && i < len(adds); k, v = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("graph: edge key %x: %w", k, ErrInconsistent)
		}
		to := binary.BigEndian.Uint64(k[8:])
		for i < len(adds) && adds[i].To < to {
			i++
		}
		if i < len(adds) && adds[i].To == to {
			var e Edge
			if err := decodeEdge(v, &e); err != nil {
				return fmt.Errorf("graph: edge %d→%d: %w", from, to, err)
			}
			olds = append(olds, old{i, e})
			i++
		}
	}
	// One buffer holds every key and value: bbolt keeps the slices until
	// the transaction ends.
	buf := make([]byte, 0, len(adds)*(16+edgeMaxLen))
	var weight uint64
	o := 0
	for i, a := range adds {
		var e Edge
		if o < len(olds) && olds[o].i == i {
			e = olds[o].e
			o++
		} else {
			e.FirstSeen = now
		}
		e.Weight += a.Weight
		e.Nofollow += a.Nofollow
		e.Redirect += a.Redirect
		e.Frame += a.Frame
		e.LastSeen = now
		weight += a.Weight
		start := len(buf)
		buf = binary.BigEndian.AppendUint64(buf, from)
		buf = binary.BigEndian.AppendUint64(buf, a.To)
		buf = appendEdge(buf, &e)
		if err := tx.PutRaw(kv.BucketEdges, buf[start:start+16:start+16], buf[start+16:len(buf):len(buf)]); err != nil {
			return fmt.Errorf("graph: edge %d→%d: %w", from, a.To, err)
		}
	}
	if _, err := tx.AddCounter(counterEdges, int64(len(adds)-len(olds))); err != nil {
		return err
	}
	_, err := tx.AddCounter(counterWeight, int64(weight))
	return err
}

// mergeAdds sums the adds of one To in sorted adds.
func mergeAdds(adds []EdgeAdd) []EdgeAdd {
	out := adds[:1]
	for _, a := range adds[1:] {
		if l := &out[len(out)-1]; l.To == a.To {
			l.Weight += a.Weight
			l.Nofollow += a.Nofollow
			l.Redirect += a.Redirect
			l.Frame += a.Frame
			continue
		}
		out = append(out, a)
	}
	return out
}

// GetEdge returns the edge from→to.
func GetEdge(tx *kv.Tx, from, to uint64) (Edge, bool, error) {
	var e Edge
	ok, err := tx.Get(kv.BucketEdges, edgeKey(from, to), &e)
	e.From, e.To = from, to
	return e, ok, err
}

// PutEdge writes e as the record of the edge e.From→e.To, in place of
// what it held. It keeps no counter: the edge must already be counted
// (AddEdgeFacts made it), and a change of its weight is the caller's to
// count. weaver merge uses it to set the times of an edge it summed.
func PutEdge(tx *kv.Tx, e *Edge) error {
	return tx.Put(kv.BucketEdges, edgeKey(e.From, e.To), e)
}

// ErrStop, returned by a ForEach callback, ends the walk without error.
var ErrStop = errors.New("graph: stop")

// ForEachNode calls fn for every node in id order. It returns fn's first
// error (other than ErrStop) or a decoding error.
func ForEachNode(tx *kv.Tx, fn func(*Node) error) error { return ForEachNodeFrom(tx, 0, fn) }

// ForEachNodeFrom is ForEachNode starting at the first node whose id is
// at least first.
func ForEachNodeFrom(tx *kv.Tx, first uint64, fn func(*Node) error) error {
	c := tx.Cursor(kv.BucketNodes)
	var n Node
	for k, v := c.Seek(kv.U64(first)); k != nil; k, v = c.Next() {
		n = Node{}
		if err := DecodeNode(k, v, &n); err != nil {
			return fmt.Errorf("graph: node %x: %w", k, err)
		}
		if err := fn(&n); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// ForEachEdge calls fn for every edge in (from, to) order.
func ForEachEdge(tx *kv.Tx, fn func(*Edge) error) error {
	c := tx.Cursor(kv.BucketEdges)
	var e Edge
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("graph: edge key %x: %w", k, ErrInconsistent)
		}
		e = Edge{}
		if err := decodeEdge(v, &e); err != nil {
			return fmt.Errorf("graph: edge %x: %w", k, err)
		}
		e.From, e.To = binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		if err := fn(&e); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// ForEachEdgeFrom calls fn for every edge leaving from, in to order.
func ForEachEdgeFrom(tx *kv.Tx, from uint64, fn func(*Edge) error) error {
	c := tx.Cursor(kv.BucketEdges)
	prefix := kv.U64(from)
	var e Edge
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		e = Edge{}
		if err := decodeEdge(v, &e); err != nil {
			return fmt.Errorf("graph: edge %x: %w", k, err)
		}
		e.From, e.To = from, binary.BigEndian.Uint64(k[8:])
		if err := fn(&e); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// Targets returns the nodes that from links to, in id order: the keys of
// its out-edges, without decoding their values.
func Targets(tx *kv.Tx, from uint64) []uint64 {
	var out []uint64
	c := tx.Cursor(kv.BucketEdges)
	prefix := kv.U64(from)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == 16 {
			out = append(out, binary.BigEndian.Uint64(k[8:]))
		}
	}
	return out
}

// AdmitSubdomain is the subdomain limiter of seed 000 §5.4, persisted: it
// reports whether host may be queued given that at most max distinct hosts
// of one registrable domain are admitted (max ≤ 0: no limit). A host
// already admitted stays admitted; a new one is recorded when allowed.
//
// It reads the roots log for each call (limiter.go): a writer that admits
// many hosts keeps a Limiter instead. A new host is one walk down the
// tree and its append to the log: the domain's hosts are counted from
// where host's key would be, up to max, backwards, and forwards only when
// the key after it is the domain's too (a second walk), with the log's.
func AdmitSubdomain(tx *kv.Tx, host string, max int) (bool, error) {
	l, err := LoadLimiter(tx)
	if err != nil {
		return false, err
	}
	return l.Admit(tx, host, max)
}

// Subdomains returns the hosts admitted under host's registrable domain
// (see AdmitSubdomain), in name order.
func Subdomains(tx *kv.Tx, host string) []string {
	l, err := LoadLimiter(tx)
	if err != nil {
		key, d := domainKey(host)
		return subdomains(tx, key[:d+1])
	}
	return l.Subdomains(tx, host)
}

// subdomains returns the hosts of roots under prefix (a domain and its
// zero byte), in name order.
func subdomains(tx *kv.Tx, prefix []byte) []string {
	var out []string
	c := tx.Cursor(kv.BucketRoots)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		out = append(out, string(k[len(prefix):]))
	}
	return out
}

// Unadmit takes host's place under its registrable domain back (see
// AdmitSubdomain), for a host that was never fetched.
func Unadmit(tx *kv.Tx, host string) error {
	l, err := LoadLimiter(tx)
	if err != nil {
		return err
	}
	return l.Unadmit(tx, host)
}

// RootKey is host's key in the roots bucket (and its value in the
// limiter's log): its registrable domain, a zero byte, the host.
func RootKey(host string) []byte {
	root := RegistrableDomain(host)
	key := make([]byte, 0, len(root)+1+len(host))
	return append(append(append(key, root...), 0), host...)
}

// RootKeyHost returns the host of key, a roots key, and whether key is
// one: a host after the zero byte, and before it the host's registrable
// domain.
func RootKeyHost(key []byte) (string, bool) {
	d := bytes.IndexByte(key, 0)
	if d <= 0 || d == len(key)-1 {
		return "", false
	}
	host := string(key[d+1:])
	return host, bytes.Equal(RootKey(host), key)
}

// Check verifies graph's invariants: every host maps to a node that names
// it back, every node is indexed, every edge joins two existing nodes with
// a positive weight at least its link facts, the mirror index agrees with
// the nodes (see NoteContentHash), every edge's anchors are of an edge
// that exists, every node's crawl history is whole and in time order (see
// checkHistory), and the counters equal what is stored. It returns all
// problems found (up to a limit), joined, wrapping ErrInconsistent.
func Check(tx *kv.Tx) error {
	var problems []error
	add := func(format string, a ...any) {
		if len(problems) < 50 {
			problems = append(problems, fmt.Errorf(format, a...))
		}
	}
	// Damaged records are problems too: the walks report them and go on.
	var nodes, maxID uint64
	mirrorsComplete := tx.MetaString(metaMirrorIndex) != ""
	nc := tx.Cursor(kv.BucketNodes)
	for k, v := nc.First(); k != nil; k, v = nc.Next() {
		nodes++
		var n Node
		if err := DecodeNode(k, v, &n); err != nil {
			add("node %x: %v", k, err)
			continue
		}
		maxID = max(maxID, n.ID)
		if id, ok := Lookup(tx, n.Host); !ok || id != n.ID {
			add("node %d (%q) is not indexed by its host", n.ID, n.Host)
		}
		checkNodeMirror(tx, &n, mirrorsComplete, add)
	}
	hc := tx.Cursor(kv.BucketHosts)
	for k, v := hc.First(); k != nil; k, v = hc.Next() {
		n, ok, err := Get(tx, binary.BigEndian.Uint64(v))
		if err != nil || !ok || n.Host != string(k) {
			add("host %q points at node %x which does not name it", k, v)
		}
	}
	var edges, weight uint64
	ec := tx.Cursor(kv.BucketEdges)
	for k, v := ec.First(); k != nil; k, v = ec.Next() {
		edges++
		var e Edge
		if err := decodeEdge(v, &e); err != nil || len(k) != 16 {
			if err == nil {
				err = fmt.Errorf("key of %d bytes, want 16", len(k))
			}
			add("edge %x: %v", k, err)
			continue
		}
		e.From, e.To = binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		weight += e.Weight
		if e.Weight == 0 {
			add("edge %d→%d has weight 0", e.From, e.To)
		}
		if e.Nofollow > e.Weight || e.Redirect > e.Weight || e.Frame > e.Weight {
			add("edge %d→%d: nofollow %d, redirect %d or frame %d above its weight %d", e.From, e.To, e.Nofollow, e.Redirect, e.Frame, e.Weight)
		}
		if e.From == e.To {
			add("edge %d→%d is a self-loop", e.From, e.To)
		}
		for _, id := range []uint64{e.From, e.To} {
			if tx.GetRaw(kv.BucketNodes, kv.U64(id)) == nil {
				add("edge %d→%d: node %d does not exist", e.From, e.To, id)
			}
		}
	}
	checkMirrors(tx, add)
	checkAnchors(tx, add)
	checkHistory(tx, add)
	checkRootLog(tx, add)
	c := GetCounts(tx)
	if c.Nodes != nodes {
		add("node counter %d, %d nodes stored", c.Nodes, nodes)
	}
	if c.Edges != edges {
		add("edge counter %d, %d edges stored", c.Edges, edges)
	}
	if c.Weight != weight {
		add("weight counter %d, stored weights sum to %d", c.Weight, weight)
	}
	if next := tx.Counter(counterNextID); next < maxID {
		add("next id %d is below the largest id %d", next, maxID)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %w", ErrInconsistent, errors.Join(problems...))
	}
	return nil
}
