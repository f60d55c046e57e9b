//go:build race

package layout_test

// raceOn: the race detector makes ForceAtlas2 ten times slower; the
// UK-1996 layout figure is checked without it (go test ./layout).
const raceOn = true
