package fakeweb

import (
	"fmt"
	"strings"
	"time"
)

// Fault is a set of misbehaviours a host can be given through Config.Faults.
// Faults combine with |; when several replace the home page, the one listed
// first below wins. Every fault is deterministic.
type Fault uint32

// The faults. Those that replace the home page leave the host without links
// (Web.Links returns nil) unless said otherwise.
const (
	// SlowDrip answers 200 and then writes one byte per second, forever.
	SlowDrip Fault = 1 << iota
	// EndlessBody streams filler markup as fast as the client reads, forever.
	EndlessBody
	// Huge serves a 50 MiB page with a Content-Length and no links.
	Huge
	// GzipBomb serves Content-Encoding: gzip, under 1 MB on the wire, that
	// inflates to 1,000,000,000 bytes of whitespace-padded markup.
	GzipBomb
	// RedirectLoop redirects / to /a and /a back to /.
	RedirectLoop
	// RedirectChain20 redirects / to /hop/1, ... /hop/19 to /hop/20, which is
	// a small page without cross-host links: 20 redirects in all.
	RedirectChain20
	// ResetMidBody sends headers and part of the body, then resets the TCP
	// connection (SO_LINGER 0).
	ResetMidBody
	// BinaryHTML serves random bytes labelled text/html.
	BinaryHTML
	// ManyLinks serves a home page of 100,000 links to t<N>.linkfarm.test,
	// which are not hosts of the web.
	ManyLinks
	// InvalidUTF8 serves markup with invalid UTF-8 and 10,000 unclosed nested
	// elements, and only same-host links: golang.org/x/net/html's Parse
	// rejects it (it stops at 512 open elements) while a tokenizer reads it,
	// and either way the host has no out-links.
	InvalidUTF8
	// InvalidBytes serves the normal page and links with invalid UTF-8 in the
	// title, the text and some anchor texts.
	InvalidBytes
	// TooMany429 answers the first Config.FaultRepeat non-robots requests with
	// 429 and Retry-After: 1, then behaves normally.
	TooMany429
	// Burst5xx answers the first Config.FaultRepeat non-robots requests with
	// 500, 503 (with Retry-After: 1), 500, ... then behaves normally. With
	// TooMany429 too, the 5xx burst follows the 429s.
	Burst5xx
	// CalendarTrap adds, ahead of the normal links, links to /calendar?date=
	// (whose pages link to the next day), to /a/ (whose pages link one level
	// deeper) and to http://d1.trap-<host>/, a host served as a trap page
	// linking to d2.trap-<host>, and so on without end.
	CalendarTrap
	// LinksToPrivate adds, ahead of the normal links, links to 10.0.0.1,
	// 127.0.0.1:1, [::1], 169.254.169.254 and 192.168.1.1.
	LinksToPrivate
	// HugeRobots serves a 10 MiB robots.txt that allows /.
	HugeRobots
	// BinaryRobots serves 64 KiB of random bytes as robots.txt.
	BinaryRobots
	// RobotsRedirect redirects /robots.txt to /robots-real.txt, which
	// disallows / for every agent.
	RobotsRedirect
	// SlowAnswer answers every request a second (SlowAnswerDelay) later
	// than the rest of the web: a slow server, whose links a crawler
	// reads after those of hosts further from the seed.
	SlowAnswer
	// Unavailable answers the first Config.FaultRepeat non-robots requests
	// with 503 and Retry-After: 1, then behaves normally: a host that
	// answers on a retry, after hosts further from the seed.
	Unavailable

	faultEnd
)

var faultNames = []string{
	"SlowDrip", "EndlessBody", "Huge", "GzipBomb", "RedirectLoop",
	"RedirectChain20", "ResetMidBody", "BinaryHTML", "ManyLinks", "InvalidUTF8",
	"InvalidBytes", "TooMany429", "Burst5xx", "CalendarTrap", "LinksToPrivate", "HugeRobots",
	"BinaryRobots", "RobotsRedirect", "SlowAnswer", "Unavailable",
}

// SlowAnswerDelay is how much later than the web a SlowAnswer host answers.
const SlowAnswerDelay = time.Second

// opaque are the faults after which a crawler has no page to take links from.
const opaque = SlowDrip | EndlessBody | Huge | GzipBomb | RedirectLoop |
	RedirectChain20 | ResetMidBody | BinaryHTML

// AllFaults returns every single fault, in precedence order.
func AllFaults() []Fault {
	all := make([]Fault, 0, len(faultNames))
	for f := Fault(1); f < faultEnd; f <<= 1 {
		all = append(all, f)
	}
	return all
}

// String returns the fault names joined with "|", or "none".
func (f Fault) String() string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for i, name := range faultNames {
		if f&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if rest := f &^ (faultEnd - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(rest)))
	}
	return strings.Join(parts, "|")
}

// ParseFault parses fault names (case-insensitive) separated by "|" or ",".
// It returns an error wrapping ErrUnknownFault for a name it does not know.
func ParseFault(s string) (Fault, error) {
	var f Fault
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' }) {
		part = strings.TrimSpace(part)
		found := false
		for i, name := range faultNames {
			if strings.EqualFold(part, name) {
				f |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("fakeweb: parse fault %q: %w", part, ErrUnknownFault)
		}
	}
	return f, nil
}
