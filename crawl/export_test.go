package crawl

// Excluder exposes exclude_hosts matching to the external tests: it
// compiles patterns as New does and returns the host check.
func Excluder(patterns []string) (func(host string) bool, error) {
	x, err := newExcluder(patterns)
	if err != nil {
		return nil, err
	}
	return x.excluded, nil
}

// PrepareBatch and MetaRequeueNext expose Prepare's transaction size and
// its re-queue marker to the external tests.
const (
	PrepareBatch    = prepareBatch
	MetaRequeueNext = metaRequeueNext
)

// NotStored exposes the config keys a store does not remember.
var NotStored = notStored
