//go:build !unix

package crawl

// freeSpace cannot read a file system's free space here: min_free_space
// is not checked, and a pause for a full disk tries its write again at
// each check.
func freeSpace(string) (int64, bool) { return 0, false }
