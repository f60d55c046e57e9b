package kv

import (
	"errors"
	"syscall"
)

// IsFull reports whether err says a file system has no room for a write:
// no space left on the device (ENOSPC), or the user's quota used up
// (EDQUOT). A crawl pauses on such an error instead of ending.
func IsFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Waiter is how a store's group writer waits out a full file system
// (SetWaiter). Full blocks; the store writes nothing meanwhile.
type Waiter interface {
	// Full is told that a group's commit failed for want of room (IsFull:
	// the store, or a Resource the group enlisted, such as a WARC file),
	// after the store was reopened. It returns when the group should be
	// tried again (true), or given up (false: its functions get err). It
	// must return false once its owner stops: Close waits for it.
	Full(err error) (retry bool)
	// Resumed is told that a group that waited has committed.
	Resumed()
}

type waiterBox struct{ w Waiter }

// SetWaiter makes the group writer wait out a full file system with w:
// the group whose commit failed for want of room is kept, and run again
// whole when w says so — the same functions, in the same order, on the
// store as it was before the group — so that nothing is lost or written
// twice, and the groups queued behind it wait. While it waits, Update
// fails at once with the error it waits on. nil: a failed commit's error
// goes to the group's functions, as without a waiter.
func (s *Store) SetWaiter(w Waiter) {
	if w == nil {
		s.waiter.Store(nil)
		return
	}
	s.waiter.Store(&waiterBox{w})
}

// writeWaiting is write for the group writer: while the commit fails for
// want of room and the waiter says to try again, fn runs again on the
// reopened file.
func (s *Store) writeWaiting(fn func(*Tx) error) error {
	waited := false
	for {
		err := s.write(fn)
		box := s.waiter.Load()
		if err == nil || box == nil || !IsFull(err) {
			if waited {
				s.held.Store(nil)
				if err == nil && box != nil {
					box.w.Resumed()
				}
			}
			return err
		}
		s.held.Store(&err)
		if !box.w.Full(err) {
			s.held.Store(nil)
			return err
		}
		waited = true
	}
}
