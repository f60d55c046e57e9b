//go:build !linux

package export

// pageReleaser is a no-op outside Linux: see release_linux.go.
type pageReleaser struct{}

func newPageReleaser(string) *pageReleaser { return nil }

func (r *pageReleaser) tick() {}
