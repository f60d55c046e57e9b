package ingest

import "errors"

// ErrDamaged wraps the *warc.DamageError of each damaged file in Run's
// error.
var ErrDamaged = errors.New("damaged file")
