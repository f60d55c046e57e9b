package fakeweb

import (
	"strconv"
	"strings"
)

// words name the registrable domains. "ads" and "analytics" are deliberate:
// ads-12.com is not an ad host (its first label is "ads-12"), so a crawler that
// tests prefixes instead of labels loses it.
var words = []string{
	"alder", "birch", "ash", "cedar", "elm", "fir", "hazel", "juniper", "larch",
	"maple", "oak", "pine", "rowan", "spruce", "willow", "yew", "aspen", "beech",
	"cypress", "holly", "laurel", "linden", "poplar", "sequoia", "acacia", "olive",
	"myrtle", "heron", "finch", "wren", "kestrel", "plover", "lark", "swift",
	"robin", "osprey", "curlew", "thames", "severn", "tyne", "avon", "fjord",
	"delta", "harbour", "meadow", "quarry", "copper", "cobalt", "amber", "slate",
	"flint", "granite", "basalt", "quartz", "indigo", "saffron", "thistle",
	"bramble", "clover", "fern", "moss", "sorrel", "tansy", "yarrow",
}

// suffixes are weighted public suffixes, several of them multi-label, all in
// the ICANN section of the public suffix list so that any PSL implementation
// agrees on the registrable domain.
var suffixes = []struct {
	name   string
	weight int
}{
	{"com", 34}, {"org", 12}, {"net", 8}, {"co.uk", 10}, {"org.uk", 4},
	{"ac.uk", 2}, {"io", 5}, {"de", 5}, {"fr", 3}, {"nl", 3}, {"com.au", 4},
	{"co.jp", 2}, {"co.nz", 2}, {"com.br", 2}, {"info", 2}, {"dev", 2},
}

// subLabels are the first labels a host may carry under its registrable
// domain; "" is the apex. None is "ads" or "analytics", which are excluded.
var subLabels = []string{"", "", "www", "www", "www", "blog", "shop", "news", "docs", "forum", "wiki", "en", "m"}

// maxPerDomain is the most hosts sharing one registrable domain, so a crawler's
// per-domain subdomain limit of 3 never decides which hosts it sees.
const maxPerDomain = 3

// genNames returns n distinct host names. Host 0 is www.<word>-<n>.com.
func genNames(seed int64, n int) []string {
	r := newRNG(seed, streamNames, 0)
	total := 0
	for _, s := range suffixes {
		total += s.weight
	}
	numRange := max(999, 2*n)
	used := make(map[string]bool, n)
	names := make([]string, 0, n)
	for k := 0; len(names) < n; k++ {
		word := pick(r, words)
		switch k {
		case 2:
			word = "ads"
		case 4:
			word = "analytics"
		}
		num := 1 + r.intn(numRange)
		suf := "com"
		if k > 0 {
			w := r.intn(total)
			for _, s := range suffixes {
				if w < s.weight {
					suf = s.name
					break
				}
				w -= s.weight
			}
		}
		reg := word + "-" + strconv.Itoa(num) + "." + suf
		if used[reg] {
			continue
		}
		used[reg] = true
		count := 1
		switch v := r.intn(100); {
		case k == 0:
			count = 1
		case v < 12:
			count = 3
		case v < 40:
			count = 2
		}
		count = min(count, n-len(names), maxPerDomain)
		labels := map[string]bool{}
		for len(labels) < count {
			l := pick(r, subLabels)
			if k == 0 {
				l = "www"
			}
			if labels[l] {
				continue
			}
			labels[l] = true
			if l == "" {
				names = append(names, reg)
			} else {
				names = append(names, l+"."+reg)
			}
		}
	}
	return names
}

// registrable returns the part of a generated host name after its sub-label,
// good enough for naming decoy hosts; it is not a public-suffix computation.
func registrable(host string) string {
	first, rest, ok := strings.Cut(host, ".")
	if !ok {
		return host
	}
	for _, l := range subLabels {
		if l != "" && l == first {
			return rest
		}
	}
	return host
}

// displayName turns www.alder-17.co.uk into "Alder 17".
func displayName(host string) string {
	reg := registrable(host)
	label, _, _ := strings.Cut(reg, ".")
	label = strings.ReplaceAll(label, "-", " ")
	if label == "" {
		return host
	}
	return upperFirst(label)
}
