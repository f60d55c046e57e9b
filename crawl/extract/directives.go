package extract

import "strings"

// Rel is what a link's rel attribute says about endorsement: a set of
// RelNofollow, RelUGC and RelSponsored.
type Rel uint8

// The rel keywords weaver records (case-insensitive tokens of rel).
const (
	RelNofollow  Rel = 1 << iota // rel="nofollow": the author does not vouch for the target
	RelUGC                       // rel="ugc": user-generated content (comments, forums)
	RelSponsored                 // rel="sponsored": an advertisement or paid link
)

// Typed reports whether r holds nofollow, ugc or sponsored: a link that
// counts toward an edge's Nofollow.
func (r Rel) Typed() bool { return r != 0 }

// String lists r's keywords, space-separated, as a rel attribute would.
func (r Rel) String() string {
	var parts []string
	for _, k := range []struct {
		bit  Rel
		name string
	}{{RelNofollow, "nofollow"}, {RelUGC, "ugc"}, {RelSponsored, "sponsored"}} {
		if r&k.bit != 0 {
			parts = append(parts, k.name)
		}
	}
	return strings.Join(parts, " ")
}

// parseRel returns the keywords weaver records from a rel attribute's
// value, a space-separated token list.
func parseRel(v []byte) Rel {
	var r Rel
	for w := []byte(nil); len(v) > 0; {
		switch w, v = nextToken(v); {
		case equalFold(w, "nofollow"):
			r |= RelNofollow
		case equalFold(w, "ugc"):
			r |= RelUGC
		case equalFold(w, "sponsored"):
			r |= RelSponsored
		}
	}
	return r
}

// hasToken reports whether the space-separated token list v holds tok, a
// lower-case word, in any case.
func hasToken(v []byte, tok string) bool {
	for w := []byte(nil); len(v) > 0; {
		if w, v = nextToken(v); equalFold(w, tok) {
			return true
		}
	}
	return false
}

// nextToken returns the first token of the space-separated list v (empty
// when v is only spaces) and what follows it.
func nextToken(v []byte) (tok, rest []byte) {
	for len(v) > 0 && isSpace(v[0]) {
		v = v[1:]
	}
	i := 0
	for i < len(v) && !isSpace(v[i]) {
		i++
	}
	return v[:i], v[i:]
}

// Directives are the robots directives a page gives weaver, from
// <meta name="robots">, <meta name="weaver"> and X-Robots-Tag headers.
type Directives struct {
	NoIndex  bool // noindex or none: keep the page's title and description out of the store
	NoFollow bool // nofollow or none: the page gives no edges and its links are not followed
	// List is every known directive seen, lower case, each once, in the
	// order first seen, comma-separated: "noindex,nofollow". Directives
	// weaver does not know are left out (see robotsWords).
	List string
}

// robotsWords are the directives Directives.List records: those of the
// robots meta tag as search engines document them. Value-carrying ones
// (max-snippet:N, unavailable_after: date) are recorded by name.
var robotsWords = []string{
	"all", "none", "index", "noindex", "follow", "nofollow", "noarchive", "nocache", "nosnippet",
	"noimageindex", "notranslate", "noodp", "noydir", "indexifembedded",
	"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after",
}

// valueWords are the directives of robotsWords that carry a value after a
// colon; any other "name:" in an X-Robots-Tag names a user agent.
var valueWords = []string{"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"}

// Add records the directives of a robots meta content or X-Robots-Tag
// value already meant for weaver ("noindex, nofollow"): words separated by
// commas or spaces, any case.
func (d *Directives) Add(content string) {
	for len(content) > 0 {
		i := 0
		for i < len(content) && content[i] != ',' && !isSpace(content[i]) {
			i++
		}
		d.word(content[:i])
		if i < len(content) {
			i++
		}
		content = content[i:]
	}
}

// word records one directive; a value after a colon is dropped.
func (d *Directives) word(w string) {
	if k := strings.IndexByte(w, ':'); k >= 0 {
		w = w[:k]
	}
	var known string
	for _, r := range robotsWords {
		if strings.EqualFold(w, r) {
			known = r
			break
		}
	}
	switch known {
	case "":
		return
	case "none":
		d.NoIndex, d.NoFollow = true, true
	case "noindex":
		d.NoIndex = true
	case "nofollow":
		d.NoFollow = true
	}
	for _, have := range strings.Split(d.List, ",") {
		if have == known {
			return
		}
	}
	if d.List != "" {
		d.List += ","
	}
	d.List += known
}

// Merge returns d with o's directives added.
func (d Directives) Merge(o Directives) Directives {
	d.NoIndex = d.NoIndex || o.NoIndex
	d.NoFollow = d.NoFollow || o.NoFollow
	for w := range strings.SplitSeq(o.List, ",") {
		d.word(w)
	}
	return d
}

// RobotsTag returns the directives that X-Robots-Tag header values give
// the crawler whose robots.txt product token is agent ("weaver"): those
// of values without a user agent, and those after "agent:" (any case).
// As search engines read the header, "name:" at the start of a value, or
// after a comma, names the user agent the directives after it are meant
// for, up to the next such name ("googlebot: noindex, weaver: nofollow,
// noarchive" gives weaver nofollow and noarchive); the value-carrying
// directives (unavailable_after: ..., max-snippet: ...) are not agents.
func RobotsTag(values []string, agent string) Directives {
	var d Directives
	for _, v := range values {
		target := "" // the agent the following directives are for; "" for all
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if k := strings.IndexByte(part, ':'); k > 0 {
				name := strings.TrimSpace(part[:k])
				isValue := false
				for _, vw := range valueWords {
					isValue = isValue || strings.EqualFold(name, vw)
				}
				if !isValue && !strings.ContainsAny(name, " \t") {
					target, part = name, strings.TrimSpace(part[k+1:])
				}
			}
			if target == "" || strings.EqualFold(target, agent) {
				d.Add(part)
			}
		}
	}
	return d
}
