package fakeweb

import (
	"strconv"
	"unicode/utf8"
)

// topics and blurbs carry the characters a crawler's text handling must
// survive: ampersands, both kinds of quotes, angle brackets and non-ASCII.
var topics = []string{
	"Notes from Zürich — café culture",
	"Field notes & sketches",
	"Crème brûlée, twice a week",
	"The “naïve” gardener",
	"São Paulo street food",
	"Kraków in winter",
	"A smörgåsbord of links",
	"Straße & façade photography",
	"Bread, butter & jam",
	"O'Brien's weekly digest",
	"Tools for <small> teams",
	"Piñata economics",
	"東京 travel diary",
	"Ærøskøbing harbour log",
	"Fish & chips — a history",
	"\"Quoted\" and unquoted thoughts",
	"Résumé tips… and more",
	"Ελληνικά for beginners",
	"Walking the Thames path",
	"Rust, Go & the art of 'enough'",
}

var blurbs = []string{
	"Fish & chips, \"quotes\" and <tags> explained.",
	"Everything about café life in Zürich — since 1996.",
	"Recipes, reviews & the occasional rant.",
	"Photos from São Paulo, Kraków and Ærøskøbing.",
	"A naïve look at façades, one street at a time.",
	"Independent writing on tools & teams.",
	"Weekly notes: 'small' things, <big> ideas.",
	"Maps, walks and “long” reads.",
	"Straße für Straße: notes on cities.",
	"Prices in € and £; opinions free.",
}

var separators = []string{" — ", " | ", " · ", ": ", " – "}

// meta returns the decoded title and description of a generated host.
func (w *Web) meta(i int) (title, desc string) {
	s := w.sites[i]
	if s.title != "" {
		return s.title, s.desc
	}
	r := newRNG(w.seed, streamMeta, i)
	name := displayName(s.name)
	title = name + pick(r, separators) + pick(r, topics)
	desc = "Welcome to " + name + ". " + pick(r, blurbs) + " Since " + strconv.Itoa(1994+r.intn(30)) + "."
	return title, desc
}

// namedEntities are the forms escapeText may pick for a rune; all are in the
// HTML5 entity table, so html.UnescapeString and any parser decode them.
var namedEntities = map[rune]string{
	'é': "&eacute;", 'ü': "&uuml;", '—': "&mdash;", '–': "&ndash;", 'ç': "&ccedil;",
	'ñ': "&ntilde;", 'ö': "&ouml;", 'å': "&aring;", 'ï': "&iuml;", '“': "&ldquo;",
	'”': "&rdquo;", 'Æ': "&AElig;", 'ø': "&oslash;", 'ß': "&szlig;", '…': "&hellip;",
	'·': "&middot;", '€': "&euro;", '£': "&pound;", 'û': "&ucirc;", 'è': "&egrave;",
}

// escapeText escapes s for HTML text (attr false) or a double-quoted attribute
// value (attr true), choosing among equivalent spellings with r so pages carry
// the variety of real markup. Decoding the result always gives back s.
func escapeText(r *rng, s string, attr bool) string {
	return string(appendEscaped(make([]byte, 0, len(s)+16), r, s, attr))
}

// appendEscaped appends escapeText(r, s, attr) to dst.
func appendEscaped(dst []byte, r *rng, s string, attr bool) []byte {
	for k := 0; k < len(s); {
		c := s[k]
		if c < 0x80 {
			switch c {
			case '&':
				if r.chance(0.8) {
					dst = append(dst, "&amp;"...)
				} else {
					dst = append(dst, "&#38;"...)
				}
			case '<':
				dst = append(dst, "&lt;"...)
			case '>':
				dst = append(dst, "&gt;"...)
			case '"':
				if attr || r.chance(0.5) {
					dst = append(dst, "&quot;"...)
				} else {
					dst = append(dst, c)
				}
			case '\'':
				switch r.intn(3) {
				case 0:
					dst = append(dst, "&#39;"...)
				case 1:
					dst = append(dst, "&apos;"...)
				default:
					dst = append(dst, c)
				}
			default:
				dst = append(dst, c)
			}
			k++
			continue
		}
		c2, size := utf8.DecodeRuneInString(s[k:])
		switch v := r.intn(10); {
		case v < 6 || c2 == utf8.RuneError:
			dst = append(dst, s[k:k+size]...)
		case v < 8 && namedEntities[c2] != "":
			dst = append(dst, namedEntities[c2]...)
		case v < 9:
			dst = append(dst, "&#"...)
			dst = strconv.AppendInt(dst, int64(c2), 10)
			dst = append(dst, ';')
		default:
			dst = append(dst, "&#x"...)
			dst = strconv.AppendInt(dst, int64(c2), 16)
			dst = append(dst, ';')
		}
		k += size
	}
	return dst
}
