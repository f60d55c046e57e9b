package crawl

import (
	"errors"
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/kv"
)

// metaPaused, while the crawl is paused for its network, holds when the
// pause began: a crawl started on the store then begins by probing.
const metaPaused = "crawl.paused"

// pauseBack returns the leases claimed and the hosts open to the queue, as
// giveBack does, and records the pause, in one transaction.
func (c *Crawler) pauseBack(buf []frontier.Lease, open []*task) error {
	err := c.store.Update(func(tx *kv.Tx) error {
		if err := c.giveBackTx(tx, buf, open); err != nil {
			return err
		}
		return tx.SetMetaString(metaPaused, c.net.pausedSince().UTC().Format(time.RFC3339Nano))
	})
	if err != nil {
		return fmt.Errorf("%w: pausing: %w", ErrStoreFailed, err)
	}
	return nil
}

// parkCommit writes a parked task's robots.txt (fetched by its last step)
// and the time it waits for on its lease, in a transaction of its own: a
// stop now loses neither, and the resumed crawl waits as this one would.
func (c *Crawler) parkCommit(t *task, fatal chan<- error) {
	t.persist = false
	rec, of, id, host, at := t.p.robots, t.p.robotsOf, t.p.lease.NodeID, t.p.lease.Host, t.readyAt
	var caps []*Capture
	if rec != nil {
		caps, t.p.robotsCaptures = t.p.robotsCaptures, nil
	}
	t.p.robots, t.p.robotsOf = nil, ""
	done := c.store.Commit(func(tx *kv.Tx) error {
		if err := c.putRobotsArchived(tx, host, of, rec, caps); err != nil {
			return err
		}
		_, err := frontier.Park(tx, id, at)
		return err
	})
	go func() {
		if err := <-done; err != nil {
			c.storeFailed(fatal, fmt.Errorf("%w: parking %s: %w", ErrStoreFailed, host, err))
		}
	}()
}

// giveBack returns to the queue, in one transaction, the leases claimed
// and not opened and the hosts open and unfinished, each at its old place
// and with the time it waits for; the robots.txt an open host fetched is
// kept.
func (c *Crawler) giveBack(buf []frontier.Lease, open []*task) error {
	if len(buf) == 0 && len(open) == 0 {
		return nil
	}
	err := c.store.Update(func(tx *kv.Tx) error { return c.giveBackTx(tx, buf, open) })
	if kv.IsFull(err) {
		// The leases stay in the store, and the next run takes them back.
		c.logf("WARN", "%d hosts open stay leased in the store, for want of room to return them (%v): the next run queues them again", len(buf)+len(open), err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: returning leases: %w", ErrStoreFailed, err)
	}
	return nil
}

// storeFailed sends a write's failure to fatal: the crawl stops. A write
// that waited for room and was given up because the crawl stops is no
// failure: what it held (a page, a claim, a park) is still leased in the
// store, and the next run queues it again. Nor is a page whose lease came
// from a claim so given up: its commit finds no lease (errLeaseLost), and
// its host is still queued, as the claim never committed.
func (c *Crawler) storeFailed(fatal chan<- error, err error) {
	if kv.IsFull(err) || (errors.Is(err, errLeaseLost) && c.disk.gaveUpWrite()) {
		c.givenUp.Add(1)
		return
	}
	select {
	case fatal <- err:
	default:
	}
}

// giveBackTx is giveBack in the caller's transaction.
func (c *Crawler) giveBackTx(tx *kv.Tx, buf []frontier.Lease, open []*task) error {
	for _, l := range buf {
		if _, err := frontier.Return(tx, l.NodeID); err != nil {
			return err
		}
	}
	for _, t := range open {
		if err := c.putRobotsArchived(tx, t.p.lease.Host, t.p.robotsOf, t.p.robots, t.p.robotsCaptures); err != nil {
			return err
		}
		if t.readyAt.After(c.now()) {
			if _, err := frontier.Park(tx, t.p.lease.NodeID, t.readyAt); err != nil {
				return err
			}
		}
		if _, err := frontier.Return(tx, t.p.lease.NodeID); err != nil {
			return err
		}
	}
	return nil
}

// putRobotsArchived is putRobots (rec nil: nothing) with robots.txt's
// exchanges (--warc), written in the same transaction: the archive holds
// the robots.txt every cached record came from, whatever stops the crawl.
func (c *Crawler) putRobotsArchived(tx *kv.Tx, host, of string, rec *robotsRecord, caps []*Capture) error {
	if rec == nil {
		return nil
	}
	if c.archive != nil && len(caps) > 0 {
		if err := c.archive.Write(tx, caps); err != nil {
			return fmt.Errorf("%w: %w", ErrArchive, err)
		}
	}
	return putRobots(tx, host, of, rec)
}
