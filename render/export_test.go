package render

// Descendants is descendants for the tests: root and every process below it.
func Descendants(root int) []int { return descendants(root) }
