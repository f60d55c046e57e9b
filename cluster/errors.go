package cluster

import (
	"errors"
	"fmt"
)

// ErrBadInput wraps every refusal that is the user's to fix: an
// unreachable server, another N, another crawl's store.
var ErrBadInput = errors.New("cluster")

func badInput(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, a...))
}

// permanent marks an error of Join's that trying again cannot mend (the
// store's).
type permanent struct{ error }
