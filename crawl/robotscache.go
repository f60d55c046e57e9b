package crawl

import (
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// ForEachRobots calls fn with every host whose robots.txt outcome the
// store caches, and when it was read, in host order. It returns the
// store's error, a record's that does not decode, or fn's.
func ForEachRobots(tx *kv.Tx, fn func(host string, fetched time.Time) error) error {
	c := tx.Cursor(kv.BucketRobots)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var rec robotsRecord
		if err := kv.Decode(v, &rec); err != nil {
			return err
		}
		if err := fn(string(k), rec.Fetched); err != nil {
			return err
		}
	}
	return nil
}
