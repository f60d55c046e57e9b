package main

import "fmt"

// count writes n and its noun, singular for one ("1 store", "2 stores").
// many is the plural; "" means one+"s".
func count[T ~int | ~int64 | ~uint64](n T, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	if many == "" {
		many = one + "s"
	}
	return fmt.Sprintf("%d %s", n, many)
}
