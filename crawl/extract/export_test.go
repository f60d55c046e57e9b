package extract

import "golang.org/x/net/html"

// Attrs returns the attributes of z's current start tag as extract reads
// them: keys lower-cased, the first of repeated keys only. inPlace reports
// whether they were read from the raw tag rather than through TagAttr.
func Attrs(z *html.Tokenizer) (attrs [][2]string, inPlace bool) {
	a := newAttrs(z)
	seen := map[string]bool{}
	for {
		k, v, ok := a.next()
		if !ok {
			return attrs, a.raw != nil
		}
		key := string(lower(k))
		if !seen[key] {
			seen[key] = true
			attrs = append(attrs, [2]string{key, string(v)})
		}
	}
}

func lower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
