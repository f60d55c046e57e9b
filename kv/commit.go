// The group commit: Commit queues a function, and one writer goroutine
// runs the functions waiting together, in one transaction and one fsync
// (doc.go). Update, outside the group, is in store.go; a commit's steps
// and what a failed one costs, in write.go; waiting out a full disk, in
// full.go.

package kv

import (
	"errors"
	"time"
)

// request is a function queued for the group writer, with how to tell
// its caller the outcome.
type request struct {
	fn      func(*Tx) error
	done    chan error
	applied chan error // nil, or told once: nil when fn's group has run and is being committed, else fn's error
	urgent  bool       // someone waits on it: the group starts without lingering
}

// apply tells a CommitApplied caller that fn's writes are in the group
// being committed.
func (r *request) apply() {
	if r.applied != nil {
		r.applied <- nil
		r.applied = nil
	}
}

// finish reports the outcome; a caller not yet told applied learns it too.
func (r *request) finish(err error) {
	if r.applied != nil {
		r.applied <- err
		r.applied = nil
	}
	r.done <- err
}

// Commit queues fn to run in the next group transaction and returns a
// channel that receives, once, nil when fn's writes are durably committed
// or the error that prevented it (fn's own error, a commit error such as a
// full disk — unless a Waiter waits it out, SetWaiter: fn then runs again
// — or ErrClosed). fn must make all its checks before it writes or
// return an error before writing: when fn fails, the group is rolled back
// and rerun without it, and fn is run once more on its own to report its
// error. The caller need not wait on the channel before doing other work.
func (s *Store) Commit(fn func(*Tx) error) <-chan error {
	return s.commit(fn, false)
}

// CommitUrgent is Commit for a function whose caller waits for it: the
// group it joins starts at once instead of lingering for more members.
func (s *Store) CommitUrgent(fn func(*Tx) error) <-chan error {
	return s.commit(fn, true)
}

// CommitApplied is CommitUrgent for a caller that may act on fn's writes
// before they are durable: applied receives nil once fn and every other
// member of its group have run without error, just before the group's
// commit and fsync, or the error that kept fn's writes out (fn's own, a
// closed store); done then reports the commit as Commit's channel does.
// Waiting on applied alone is enough to know whether to act.
//
// Acting early is safe when every later write that builds on fn's writes
// checks, in its own transaction, that they are there: bbolt commits one
// transaction after another, so a later one can be durable only if fn's
// is, and when fn's group fails to commit, a later transaction finds fn's
// writes missing and must fail. A crawl hands out the leases of a claim
// this way (a page commits only while its lease exists), so that workers
// do not wait for the claim's fsync.
func (s *Store) CommitApplied(fn func(*Tx) error) (applied, done <-chan error) {
	a := make(chan error, 1)
	d := make(chan error, 1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.reqs == nil {
		a <- ErrClosed
		d <- ErrClosed
		return a, d
	}
	s.reqs <- request{fn: fn, done: d, applied: a, urgent: true}
	return a, d
}

func (s *Store) commit(fn func(*Tx) error, urgent bool) <-chan error {
	done := make(chan error, 1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.reqs == nil {
		done <- ErrClosed
		return done
	}
	s.reqs <- request{fn: fn, done: done, urgent: urgent}
	return done
}

// CommitStats returns how many group transactions and Commit functions the
// writer has committed since Open.
func (s *Store) CommitStats() (groups, fns uint64) { return s.groups.Load(), s.fns.Load() }

var errFnFailed = errors.New("kv: a group member failed")

// writer is the one goroutine that runs Commit functions. It takes every
// request waiting when it starts a group, so while one group is being
// fsynced the next one gathers: the batch grows with the load and costs
// no added delay when the load is light.
func (s *Store) writer() {
	defer close(s.writerDone)
	batch := make([]request, 0, s.opts.MaxBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	small := max(s.opts.MaxBatch/16, 1)
	for first := range s.reqs {
		batch = append(batch[:0], first)
		lingering, urgent := false, first.urgent
	drain:
		for len(batch) < s.opts.MaxBatch {
			select {
			case r, ok := <-s.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
				urgent = urgent || r.urgent
				continue
			default:
			}
			if lingering || urgent || s.opts.Linger < 0 || len(batch) >= small {
				break
			}
			// A small group: give concurrent producers a moment to join.
			lingering = true
			linger.Reset(s.opts.Linger)
			select {
			case r, ok := <-s.reqs:
				linger.Stop()
				if !ok {
					break drain
				}
				batch = append(batch, r)
				lingering, urgent = false, urgent || r.urgent
			case <-linger.C:
			}
		}
		s.runGroup(batch)
	}
}

func (s *Store) runGroup(batch []request) {
	for len(batch) > 0 {
		failed := -1
		var ferr error
		err := s.writeWaiting(func(tx *Tx) error {
			failed, ferr = -1, nil // a group that waited for space runs again
			for i, r := range batch {
				if err := r.fn(tx); err != nil {
					failed, ferr = i, err
					return errFnFailed
				}
			}
			if err := tx.flush(); err != nil {
				return err
			}
			for i := range batch {
				batch[i].apply()
			}
			return nil
		})
		if failed < 0 {
			if err == nil {
				s.groups.Add(1)
				s.fns.Add(uint64(len(batch)))
			}
			for i := range batch {
				batch[i].finish(err)
			}
			return
		}
		// Run the failed function alone so that its error (or success, when
		// the failure came from an earlier member's writes) is its own.
		bad := batch[failed]
		batch = append(batch[:failed:failed], batch[failed+1:]...)
		alone := s.writeWaiting(func(tx *Tx) error {
			if err := runTx(tx, bad.fn); err != nil {
				return err
			}
			bad.apply()
			return nil
		})
		if alone == nil {
			s.groups.Add(1)
			s.fns.Add(1)
		} else if errors.Is(ferr, alone) || alone.Error() == ferr.Error() {
			alone = ferr
		}
		bad.finish(alone)
	}
}
