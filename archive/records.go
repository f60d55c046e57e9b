// Record copying shared by Merge and Repair: both read the records of a
// store in key order and write them to a new store in batches, and both
// queue frontier entries and leases again at their old places.

package archive

import (
	"cmp"
	"encoding/binary"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/kv"
)

// kvPair is a record copied out of a read transaction.
type kvPair struct{ k, v []byte }

// pairsFlush returns a flush that writes *batch to bucket of dst in one
// transaction, in its order, and empties it.
func pairsFlush(dst *kv.Store, bucket []byte, batch *[]kvPair) func() error {
	return func() error {
		err := dst.Update(func(tx *kv.Tx) error {
			for _, p := range *batch {
				if err := tx.PutRaw(bucket, p.k, p.v); err != nil {
					return err
				}
			}
			return nil
		})
		*batch = (*batch)[:0]
		return err
	}
}

// keysFlush returns a flush that writes *batch to bucket of dst, as keys
// of empty values (the set buckets: visited, roots, inbox), in one
// transaction, and empties it.
func keysFlush(dst *kv.Store, bucket []byte, batch *[][]byte) func() error {
	return func() error {
		err := dst.Update(func(tx *kv.Tx) error {
			for _, k := range *batch {
				if err := tx.PutRaw(bucket, k, []byte{}); err != nil {
					return err
				}
			}
			return nil
		})
		*batch = (*batch)[:0]
		return err
	}
}

// queuedAt is a frontier entry or lease to queue again, at its old place.
type queuedAt struct {
	depth int
	seq   uint64 // arrival in its store; max when unknown: after its depth's entries
	input int    // its store's place among a merge's inputs (0 in a repair)
	e     frontier.Entry
}

// compare orders by depth, arrival, then input: breadth-first, as the
// stores queued them.
func (q queuedAt) compare(o queuedAt) int {
	return cmp.Or(cmp.Compare(q.depth, o.depth), cmp.Compare(q.seq, o.seq), cmp.Compare(q.input, o.input))
}

// keySeq returns the arrival a frontier key (depth 4 B | arrival 8 B,
// kv/schema.go) holds, or max for a key of another length.
func keySeq(k []byte) uint64 {
	if len(k) != 12 {
		return ^uint64(0)
	}
	return binary.BigEndian.Uint64(k[4:])
}

// robotsRecord is crawl's robots cache value (crawl/page.go): a merge
// reads when it was fetched, a repair keeps it only when its rules decode.
type robotsRecord struct {
	Fetched time.Time `msgpack:"t"`
	Rules   kv.Bytes  `msgpack:"r"`
}

// fetchedAt returns when the robots cache record v was fetched; zero when
// it does not decode.
func fetchedAt(v []byte) time.Time {
	var r robotsRecord
	if kv.Decode(v, &r) != nil {
		return time.Time{}
	}
	return r.Fetched
}
