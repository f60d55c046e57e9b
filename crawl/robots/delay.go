package robots

import (
	"strconv"
	"strings"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// MaxCrawlDelay caps the delay CrawlDelay returns: a host asking for more
// is visited at most once a minute rather than once an hour. weaver fetches
// two URLs per host, so a larger value would only stall a worker.
const MaxCrawlDelay = 60 * time.Second

// CrawlDelay returns the Crawl-delay that the group applying to userAgent
// asks for, 0 when it asks for none or r is not Parsed, and at most
// MaxCrawlDelay.
//
// Groups are formed as Allowed forms them, except that Crawl-delay counts
// as a member line: consecutive user-agent lines start a group, which ends
// at the next user-agent line that follows an Allow, Disallow or
// Crawl-delay line. (Google's matcher ignores Crawl-delay, so for Allowed
// "User-agent: *", "Crawl-delay: 1", "User-agent: weaver" is one group; for
// CrawlDelay it is two, as its author surely meant.) If some group names
// userAgent's product token,
// only those groups count, otherwise only the "*" groups; within them the
// first valid Crawl-delay line wins. A valid value is a non-negative decimal
// number of seconds: "10", "0.5", ".5"; anything else ("10s", "-1", "1e3",
// "inf") is ignored.
func (r *Rules) CrawlDelay(userAgent string) (d time.Duration) {
	if r.Kind() != Parsed {
		return 0
	}
	defer func() {
		if recover() != nil {
			recovered.Add(1)
			d = 0
		}
	}()
	h := delayHandler{token: ProductToken(userAgent), specific: -1, global: -1}
	grobotstxt.Parse(r.body, &h)
	h.endGroup()
	secs := h.global
	if h.everSpecific {
		secs = h.specific
	}
	if secs <= 0 {
		return 0
	}
	if secs >= MaxCrawlDelay.Seconds() {
		return MaxCrawlDelay
	}
	return time.Duration(secs * float64(time.Second))
}

// delayHandler is a grobotstxt.ParseHandler that finds the Crawl-delay of
// the groups applying to token, grouping lines as grobotstxt's matcher does.
type delayHandler struct {
	token string // product token of the crawler, "" matching no group

	// The group being read.
	inGroup      bool    // a user-agent line was seen and the group not ended
	sawMember    bool    // an Allow, Disallow or Crawl-delay line was seen in it: the next user-agent line starts a new group
	groupGlobal  bool    // one of its user-agent lines is "*"
	groupMatches bool    // one of its user-agent lines names token
	groupDelay   float64 // its first valid Crawl-delay, -1 if none

	// The result so far.
	everSpecific bool    // some group named token
	specific     float64 // first delay of a group naming token, -1 if none
	global       float64 // first delay of a "*" group, -1 if none
}

func (h *delayHandler) HandleRobotsStart() {}
func (h *delayHandler) HandleRobotsEnd()   {}

func (h *delayHandler) HandleUserAgent(_ int, value string) {
	if !h.inGroup || h.sawMember {
		h.endGroup()
		h.inGroup, h.groupDelay = true, -1
	}
	name := agentName(value)
	switch {
	case len(name) > 0 && name[0] == '*':
		h.groupGlobal = true
	case h.token != "" && strings.EqualFold(name, h.token):
		h.groupMatches = true
		h.everSpecific = true
	}
}

// endGroup records the delay of the group being read, if it applies.
func (h *delayHandler) endGroup() {
	if h.inGroup && h.groupDelay >= 0 {
		if h.groupMatches && h.specific < 0 {
			h.specific = h.groupDelay
		}
		if h.groupGlobal && h.global < 0 {
			h.global = h.groupDelay
		}
	}
	h.inGroup, h.sawMember, h.groupGlobal, h.groupMatches = false, false, false, false
}

func (h *delayHandler) HandleAllow(int, string)    { h.sawMember = h.inGroup }
func (h *delayHandler) HandleDisallow(int, string) { h.sawMember = h.inGroup }
func (h *delayHandler) HandleSitemap(int, string)  {}

func (h *delayHandler) HandleUnknownAction(_ int, action, value string) {
	if !h.inGroup || !strings.EqualFold(action, "crawl-delay") {
		return
	}
	h.sawMember = true
	if secs, ok := parseDelay(value); ok && h.groupDelay < 0 {
		h.groupDelay = secs
	}
}

// parseDelay parses a Crawl-delay value: digits with at most one '.', at
// least one digit, nothing else.
func parseDelay(s string) (float64, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return secs, true
}
