package robots

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/jimsmart/grobotstxt"
)

// Kind says which policy a Rules applies.
type Kind uint8

// The policies of RFC 9309 §2.3.1. The zero Kind is not one of them: a zero
// Rules disallows everything.
const (
	// Parsed rules come from a 2xx body and are matched line by line.
	Parsed Kind = iota + 1
	// AllowAll is the "unavailable" outcome: a 4xx (other than 429), or a
	// redirect chain the caller gave up on.
	AllowAll
	// DisallowAll is the "unreachable" outcome: a 5xx, a 429, a network
	// failure, or a status outside 200–599.
	DisallowAll
)

// String returns the name of k as used in logs: "parsed", "allow-all",
// "disallow-all", or "invalid".
func (k Kind) String() string {
	switch k {
	case Parsed:
		return "parsed"
	case AllowAll:
		return "allow-all"
	case DisallowAll:
		return "disallow-all"
	}
	return "invalid"
}

// MaxBodyBytes is how much of a robots.txt body is parsed. RFC 9309 §2.5
// requires crawlers to parse at least 500 KiB; the rest is ignored.
const MaxBodyBytes = 500 << 10

// Rules is the robots.txt policy of one host, built by FromResponse or
// Unreachable. The zero value and a nil *Rules disallow everything. A Rules
// is immutable (except through UnmarshalBinary) and safe for concurrent use.
type Rules struct {
	kind   Kind   // which policy applies
	status int    // HTTP status of the fetch, 0 when unreachable
	body   string // the body as prepare leaves it (capped, keys lower-cased); empty unless kind is Parsed
}

// FromResponse returns the rules for a robots.txt fetch that ended with the
// HTTP status code status and the given body, following RFC 9309 §2.3.1:
//
//   - 2xx: the body is parsed; only its first MaxBodyBytes count, cut back
//     to the last complete line so that a rule is never half-read;
//   - 3xx: the caller follows redirects (RFC: at least five hops) and passes
//     a 3xx only when it gave up; §2.3.1.2 then lets the crawler treat the
//     file as unavailable, so everything is allowed;
//   - 4xx: "unavailable", everything is allowed (§2.3.1.3), except 429 Too
//     Many Requests, which is a request to slow down and is treated like a
//     5xx, as Google does;
//   - 5xx: "unreachable", everything is disallowed (§2.3.1.4);
//   - any other code: treated as unreachable.
//
// FromResponse keeps a copy of the capped body, never a reference to body.
func FromResponse(status int, body []byte) *Rules {
	switch {
	case status >= 200 && status <= 299:
		return &Rules{kind: Parsed, status: status, body: prepare(body)}
	case status == 429:
		return &Rules{kind: DisallowAll, status: status}
	case status >= 300 && status <= 499:
		return &Rules{kind: AllowAll, status: status}
	default:
		return &Rules{kind: DisallowAll, status: status}
	}
}

// Unreachable returns the rules for a robots.txt that could not be fetched
// at all (DNS failure, refused connection, timeout): RFC 9309 §2.3.1.4
// requires a complete disallow. The caller retries later; the same section
// lets it assume "unavailable" (FromResponse(404, nil)) after a long time,
// say 30 days, of failures, which is its decision.
func Unreachable() *Rules {
	return &Rules{kind: DisallowAll}
}

// capBody returns the prefix of body that is parsed: at most MaxBodyBytes,
// and, when body is longer, only up to the last line ending within them.
func capBody(body []byte) []byte {
	if len(body) <= MaxBodyBytes {
		return body
	}
	body = body[:MaxBodyBytes]
	if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
		body = body[:i+1]
	}
	return body
}

// prepare returns the text Allowed parses: the capped body with its keys
// lower-cased (see lowerKeys).
func prepare(body []byte) string {
	b := bytes.Clone(capBody(body))
	lowerKeys(b)
	return string(b)
}

// lowerKeys lower-cases, in place, the key of every line of b ("User-Agent"
// in "User-Agent: Foo"), leaving values alone. grobotstxt compares keys
// with strings.ToLower, which allocates for every key that has an upper-case
// letter, several times per line; on lower-case keys it does not, which
// makes Allowed about three times faster. The key is what grobotstxt takes
// for one: the text before the first ':' of the line (comments removed), or
// without a ':' the first word. A key with a non-ASCII byte is left as it is,
// since only ASCII is folded here.
func lowerKeys(b []byte) {
	for len(b) > 0 {
		end := bytes.IndexAny(b, "\r\n")
		if end < 0 {
			end = len(b)
		}
		line := b[:end]
		if len(line) > maxLineLen {
			line = line[:maxLineLen] // grobotstxt ignores the rest of the line
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			line = line[:i]
		} else {
			start := 0
			for start < len(line) && (line[start] == ' ' || line[start] == '\t') {
				start++
			}
			if i := bytes.IndexAny(line[start:], " \t"); i >= 0 {
				line = line[:start+i]
			}
		}
		lowerASCII(line)
		if end < len(b) {
			end++
		}
		b = b[end:]
	}
}

// maxLineLen is how many bytes of a line grobotstxt reads.
const maxLineLen = 2083*8 - 1

// lowerASCII lower-cases key in place if it is all ASCII.
func lowerASCII(key []byte) {
	for _, c := range key {
		if c >= 0x80 {
			return
		}
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			key[i] = c + 'a' - 'A'
		}
	}
}

// Kind returns the policy r applies; a nil r reports DisallowAll.
func (r *Rules) Kind() Kind {
	if r == nil || r.kind == 0 {
		return DisallowAll
	}
	return r.kind
}

// Status returns the HTTP status code r was built from, 0 for Unreachable.
func (r *Rules) Status() int {
	if r == nil {
		return 0
	}
	return r.status
}

// Allowed reports whether the crawler whose User-Agent header is userAgent
// may fetch rawURL. userAgent may be a bare product token ("weaver") or a
// full header value ("weaver/0.1 (+https://…)"); see ProductToken. An
// unparseable rawURL is not allowed.
//
// For Parsed rules, the longest matching pattern of the applicable group
// decides and Allow wins a tie (RFC 9309 §2.2.2). rawURL is percent-encoded
// before matching, as §2.2.2 requires, and its escapes upper-cased as the
// patterns' are, so "/café" and "/caf%c3%a9" both match "Disallow: /café".
// Allowed does not special-case /robots.txt: the caller fetches it without
// asking.
func (r *Rules) Allowed(userAgent, rawURL string) (ok bool) {
	switch r.Kind() {
	case AllowAll:
		return true
	case Parsed:
	default:
		return false
	}
	defer func() {
		// grobotstxt has panic calls for states its parser cannot reach;
		// should one be reached, a crawler must not die of a robots.txt.
		if recover() != nil {
			recovered.Add(1)
			ok = false
		}
	}()
	var agents []string
	if tok := ProductToken(userAgent); tok != "" {
		agents = []string{tok}
	}
	m := grobotstxt.NewRobotsMatcher()
	// grobotstxt has no exported way to set the URL and agents a matcher
	// compares against other than running it; on an empty file this only
	// primes m (and reports false for an unparseable URL). The real file
	// then goes through lineMatcher, which fixes user-agent extraction.
	if !m.AgentsAllowed("", agents, upperEscapes(rawURL)) {
		return false
	}
	grobotstxt.Parse(r.body, lineMatcher{m})
	return !m.Disallowed()
}

// upperEscapes returns s with the hex digits of its %XX escapes in upper
// case, the form grobotstxt gives patterns; s itself when it has none.
func upperEscapes(s string) string {
	var b []byte
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '%' || !isHex(s[i+1]) || !isHex(s[i+2]) {
			continue
		}
		for j := i + 1; j <= i+2; j++ {
			if 'a' <= s[j] && s[j] <= 'f' {
				if b == nil {
					b = []byte(s)
				}
				b[j] -= 'a' - 'A'
			}
		}
		i += 2
	}
	if b == nil {
		return s
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// recovered counts panics recovered from grobotstxt; the fuzz test checks
// that it stays zero.
var recovered atomic.Int64

// lineMatcher is a grobotstxt.RobotsMatcher that reads the name on a
// user-agent line as Google's reference parser does.
type lineMatcher struct{ *grobotstxt.RobotsMatcher }

// HandleUserAgent passes on the part of value that names a crawler.
func (m lineMatcher) HandleUserAgent(lineNum int, value string) {
	m.RobotsMatcher.HandleUserAgent(lineNum, agentName(value))
}

// agentName returns what a user-agent line's value names: "*" followed by
// nothing or a space is the global group and is returned unchanged (the
// matcher recognises it), otherwise the leading run of [A-Za-z_-], which
// may be empty.
func agentName(value string) string {
	if len(value) > 0 && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t') {
		return value
	}
	return value[:tokenLen(value)]
}

// tokenLen returns the length of the leading run of product-token
// characters of s: [A-Za-z_-], per RFC 9309 §2.2.1.
func tokenLen(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			break
		}
		i++
	}
	return i
}

// ProductToken returns the product token a robots.txt group must name for
// rules to apply to userAgent, or "" when userAgent does not start with a
// valid one, in which case only the "*" group applies.
//
// A valid token is a non-empty run of [A-Za-z_-] (RFC 9309 §2.2.1) that
// ends userAgent or is followed by "/" (the HTTP product/version form):
// "weaver" and "weaver/0.1 (+https://…)" give "weaver", while "weaver2/1",
// "weaver (+https://…)" and "Foo Bar" give "", as Google's reference
// rejects such names. Callers should check their configured User-Agent
// with it once at start-up.
func ProductToken(userAgent string) string {
	n := tokenLen(userAgent)
	if n == 0 || (n < len(userAgent) && userAgent[n] != '/') {
		return ""
	}
	return userAgent[:n]
}

// encodingVersion is the first byte of MarshalBinary's output.
const encodingVersion = 1

// MarshalBinary encodes r for the store's robots cache: a version byte, the
// Kind, the status as a uvarint, then the body (capped, its keys
// lower-cased, which changes no decision). It never fails; a nil r encodes
// as Unreachable.
func (r *Rules) MarshalBinary() ([]byte, error) {
	var status int
	var body string
	if r != nil {
		status, body = r.status, r.body
	}
	if status < 0 {
		status = 0
	}
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(body))
	b = append(b, encodingVersion, byte(r.Kind()))
	b = binary.AppendUvarint(b, uint64(status))
	return append(b, body...), nil
}

// UnmarshalBinary replaces r with the rules encoded in data by
// MarshalBinary. It returns ErrShortData, ErrVersion or ErrKind (wrapped)
// when data is not such an encoding, and leaves r unchanged then. It must
// not be called on a Rules other goroutines are using.
func (r *Rules) UnmarshalBinary(data []byte) error {
	if len(data) < 3 {
		return fmt.Errorf("robots: unmarshal: %w", ErrShortData)
	}
	if data[0] != encodingVersion {
		return fmt.Errorf("robots: unmarshal: version %d: %w", data[0], ErrVersion)
	}
	kind := Kind(data[1])
	if kind < Parsed || kind > DisallowAll {
		return fmt.Errorf("robots: unmarshal: kind %d: %w", data[1], ErrKind)
	}
	status, n := binary.Uvarint(data[2:])
	if n <= 0 || status > 999 {
		return fmt.Errorf("robots: unmarshal: status: %w", ErrShortData)
	}
	body := data[2+n:]
	if kind != Parsed {
		body = nil
	}
	*r = Rules{kind: kind, status: int(status), body: prepare(body)}
	return nil
}
