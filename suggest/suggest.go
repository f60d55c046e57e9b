// Package suggest finds the word a user meant: the flag, command, config
// key or job key nearest to a typo, for "did you mean …?".
package suggest

// Closest returns the candidate nearest to typo by edit distance, when it
// is near enough to be what was meant: at most one edit for a word of up
// to four letters, two up to eight, three beyond. A typo that is a prefix
// of exactly one candidate (--max-dep) also names it. ok is false when
// nothing is close, or two candidates are equally close.
func Closest(typo string, candidates []string) (best string, ok bool) {
	bestD, ties := -1, 0
	for _, c := range candidates {
		d := Distance(typo, c)
		switch {
		case bestD < 0 || d < bestD:
			best, bestD, ties = c, d, 0
		case d == bestD && c != best:
			ties++
		}
	}
	limit := 1
	switch n := len([]rune(typo)); {
	case n > 8:
		limit = 3
	case n > 4:
		limit = 2
	}
	if bestD >= 0 && bestD <= limit && ties == 0 {
		return best, true
	}
	// A unique completion: "max-dep" for max-depth.
	prefixOf := ""
	for _, c := range candidates {
		if len(typo) >= 3 && len(c) > len(typo) && c[:len(typo)] == typo {
			if prefixOf != "" {
				return "", false
			}
			prefixOf = c
		}
	}
	return prefixOf, prefixOf != ""
}

// Distance is the optimal-string-alignment Damerau–Levenshtein
// distance between a and b: insertions, deletions, substitutions and
// transpositions of two neighbours (crwal → crawl is one edit) each
// count one.
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// Three rows: the one before last (for transpositions), last, this.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
