//go:build !race

package layout_test

const raceOn = false
