//go:build !linux

package serve

// diskFree cannot tell on this platform: a spool then stops only when a
// write fails.
func diskFree(string) (int64, error) { return -1, nil }
