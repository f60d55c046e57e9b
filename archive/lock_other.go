//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package archive

import "os"

// lockShared does nothing where flock is not available: Repair then relies
// on the user not to repair a store a crawl is writing.
func lockShared(*os.File) error { return nil }
