//go:build !race

package robots_test

// slowdown scales time limits: the race detector makes code 5–20× slower.
const slowdown = 1
