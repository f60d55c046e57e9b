//go:build !race

package fakeweb_test

// raceEnabled skips checks that take too long with the race detector on.
const raceEnabled = false
