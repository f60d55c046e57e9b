package frontier

import (
	"encoding/binary"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// The revisit schedule (issue 27): with a revisit policy every answered
// host waits in kv.BucketDue until its next crawl is due, keyed by due
// time then node id (8 bytes each, big-endian) so that a cursor scan
// meets the hosts in the order they fall due. The value is the URL to
// fetch, empty for the host's home page. When a host is due, and whether
// it may be fetched then, is the crawler's judgement; this file owns the
// index's keys.

// dueKeyLen is the length of a due index key: due time | node id.
const dueKeyLen = 16

func dueKey(at time.Time, node uint64) []byte {
	k := make([]byte, dueKeyLen)
	binary.BigEndian.PutUint64(k, uint64(at.UnixNano()))
	binary.BigEndian.PutUint64(k[8:], node)
	return k
}

// dueAt returns the due time of a due index key of the right length.
func dueAt(k []byte) time.Time { return time.Unix(0, int64(binary.BigEndian.Uint64(k))) }

// Schedule files node in the revisit schedule as due at at, to fetch url
// ("" for its home page). It returns the store's error.
func Schedule(tx *kv.Tx, node uint64, at time.Time, url string) error {
	return tx.PutRaw(kv.BucketDue, dueKey(at, node), []byte(url))
}

// Unschedule takes node, filed as due at at, out of the revisit schedule
// (nothing when it is not filed so). It returns the store's error.
func Unschedule(tx *kv.Tx, node uint64, at time.Time) error {
	return tx.Delete(kv.BucketDue, dueKey(at, node))
}

// Due is a host the revisit schedule gave up because it is due.
type Due struct {
	Node uint64
	URL  string // "" for the host's home page
}

// TakeDue takes out of the revisit schedule up to limit hosts due at or
// before now, earliest first, and returns them with the earliest due time
// left: zero when none is, now when the limit stopped the walk and more
// may be due (the next claim takes them). A key of another layout (a
// damaged index) is taken out too and counts against limit. It returns
// the store's error.
func TakeDue(tx *kv.Tx, now time.Time, limit int) (due []Due, next time.Time, err error) {
	var keys [][]byte
	cur := tx.Cursor(kv.BucketDue)
	k, v := cur.First()
	for ; k != nil && len(keys) < limit; k, v = cur.Next() {
		if len(k) == dueKeyLen {
			if dueAt(k).After(now) {
				break
			}
			due = append(due, Due{Node: binary.BigEndian.Uint64(k[8:]), URL: string(v)})
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	if len(k) == dueKeyLen {
		next = dueAt(k)
	}
	for _, key := range keys {
		if err := tx.Delete(kv.BucketDue, key); err != nil {
			return due, next, err
		}
	}
	if next.IsZero() && len(keys) == limit {
		next = now
	}
	return due, next, nil
}

// NextDue returns the earliest due time in the revisit schedule (zero
// when no host is scheduled, or the store has no schedule).
func NextDue(tx *kv.Tx) time.Time {
	if !tx.Exists(kv.BucketDue) {
		return time.Time{}
	}
	k, _ := tx.Cursor(kv.BucketDue).First()
	if len(k) != dueKeyLen {
		return time.Time{}
	}
	return dueAt(k)
}
