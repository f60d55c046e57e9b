package ingest

// SetMergeChunk sets how many edges a merge transaction writes, until
// the returned function puts it back.
func SetMergeChunk(n int) (restore func()) {
	old := mergeChunk
	mergeChunk = n
	return func() { mergeChunk = old }
}

// SetBeforeUpdate sets a function called before each of an import's
// transactions after its start, whose error stops it there, until the
// returned function removes it.
func SetBeforeUpdate(fn func() error) (restore func()) {
	beforeUpdate = fn
	return func() { beforeUpdate = nil }
}
