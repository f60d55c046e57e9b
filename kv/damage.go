package kv

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// CorruptError says a store's file is damaged: a page that does not say
// what its parent says it is, an element outside its page, a fault
// reading the mapped file. It wraps ErrCorrupt and names the file, so
// that a command can point at the way out (weaver check --repair).
type CorruptError struct {
	Path string // the store's file
	Why  string // what is wrong, one line
}

func (e *CorruptError) Error() string { return e.Path + " " + ErrCorrupt.Error() + ": " + e.Why }

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func corruptf(path, format string, a ...any) error {
	why := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")
	return &CorruptError{Path: path, Why: why}
}

// guard is deferred, with faults turned into panics (onFault), by
// everything in kv that reads the file through bbolt: View, Update, the
// group-commit writer, Check. bbolt trusts its pages and asserts by
// panicking ("Page expected to be: 2, but self identifies as …"), and a
// page mapped past the end of a file cut short faults; both are damage,
// and become a CorruptError naming the file instead of a crash. A panic
// is recovered only in the goroutine that raised it: every read must go
// through one of these calls in its own goroutine (a Tx never crosses
// goroutines).
//
// A panic raised by the caller's function itself (a bug, not damage)
// goes on as it was: turning it into "the store is corrupt" would send
// the user to repair a sound file.
func (s *Store) guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if !isDamage(r) {
		panic(r)
	}
	*err = corruptf(s.path, "%v", r)
}

// onFault turns a fault on the mapped file into a panic that guard can
// recover, for the calling goroutine, and returns what to restore:
// defer debug.SetPanicOnFault(onFault()).
func onFault() bool { return debug.SetPanicOnFault(true) }

// isDamage reports whether the recovered value r comes from reading a
// damaged file: a fault at a mapped address (only raised with
// SetPanicOnFault), or a panic whose first frame outside the runtime is
// bbolt's.
func isDamage(r any) bool {
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		return true
	}
	return strings.HasPrefix(panicSite(), "go.etcd.io/bbolt")
}

// panicSite returns the function that panicked: the first frame below
// the runtime's panic machinery that is not in the runtime or in the
// standard library helpers bbolt calls (bytes, sort, unsafe copies).
func panicSite() string {
	pc := make([]uintptr, 64)
	n := runtime.Callers(2, pc)
	frames := runtime.CallersFrames(pc[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.sigpanic":
			panicking = true
		case panicking && !stdlib(f.Function):
			return f.Function
		}
		if !more {
			return "unknown"
		}
	}
}

func stdlib(fn string) bool {
	for _, p := range []string{"runtime.", "internal/", "bytes.", "sort.", "slices.", "unsafe.", "sync."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
