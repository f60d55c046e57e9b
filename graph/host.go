package graph

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

const (
	maxHostLen  = 253 // RFC 1035 limit of a name in text form, root dot excluded
	maxLabelLen = 63
	// maxInputLen bounds the work done on hostile input before IDNA runs.
	// It is well above 253 because IDNA ignores some code points (soft
	// hyphens, joiners...) and a long input may map to a short name.
	maxInputLen = 1024
)

// idnaProfile is UTS #46 lookup as browsers (the URL Standard) use it:
// non-transitional (ß stays ß), joiner and bidi rules on, but no STD3 or
// hyphen rules, so "_dmarc" and "r3---sn-x" labels get through IDNA. Our own
// character check runs on the ASCII result, so STD3 is enforced there, with
// '_' allowed.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
)

// NormalizeHost returns the canonical form of a URL host (with or without a
// port) for scheme, "http" or "https": the key under which weaver stores a
// Node. Every place that turns a link into a host calls it, so two spellings
// of one host always give one node.
//
// Names are lowercased, converted to ASCII with IDNA (Bücher.example becomes
// xn--bcher-kva.example) and lose their root dot; their labels may hold only
// a-z, 0-9, '-' and '_' (underscores and edge hyphens occur on the real web),
// be 1 to 63 bytes long, and the whole name at most 253 bytes. Names that are
// already ASCII skip IDNA, as in the URL Standard, so an xn-- label is kept
// as written.
//
// A name whose last label is a number is an IPv4 address and is read the way
// the URL Standard (and so every browser) reads it: 1 to 4 parts, each
// decimal, 0x-hex or 0-octal, the last part filling the remaining bytes, so
// 127.1, 0x7f.1 and 2130706433 all become 127.0.0.1, while 256.1.1.1,
// 1.2.3.4.5 and example.123 are invalid. Converting rather than rejecting
// lets later address checks see the address a browser would connect to.
// IPv6 addresses must be bracketed and come out in RFC 5952 form
// ([2001:db8::1]); zones and bracketed IPv4 are invalid.
//
// The port of the scheme (80 for http, 443 for https) and an empty port are
// dropped, others are kept in decimal without leading zeros ("host:8080").
// For any other scheme no port is default.
//
// Errors wrap ErrEmptyHost, ErrHostTooLong or ErrInvalidHost with hostport.
// An input that is already canonical is returned as is, without allocating.
func NormalizeHost(hostport, scheme string) (string, error) {
	if hostport == "" {
		return "", fmt.Errorf("%w: %q", ErrEmptyHost, hostport)
	}
	if len(hostport) > maxInputLen {
		return "", fmt.Errorf("%w: %q", ErrHostTooLong, hostport)
	}
	host, port, ok := splitHostPort(hostport)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrInvalidHost, hostport)
	}
	port, ok = canonicalPort(port, scheme)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrInvalidHost, hostport)
	}
	if host == "" {
		return "", fmt.Errorf("%w: %q", ErrEmptyHost, hostport)
	}
	var err error
	if host[0] == '[' {
		host, err = canonicalIPv6(host)
	} else {
		host, err = canonicalName(host)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %q", err, hostport)
	}
	if port == "" {
		return host, nil
	}
	// Give back the input itself when it was already canonical.
	if n := len(host); len(hostport) == n+1+len(port) &&
		hostport[:n] == host && hostport[n] == ':' && hostport[n+1:] == port {
		return hostport, nil
	}
	return host + ":" + port, nil
}

// HostOf returns NormalizeHost(u.Host, u.Scheme). It returns an error
// wrapping ErrUnsupportedScheme when u is not an http or https URL, and
// ErrEmptyHost when it has no host; otherwise those of NormalizeHost.
func HostOf(u *url.URL) (string, error) {
	if u == nil {
		return "", fmt.Errorf("%w: nil URL", ErrEmptyHost)
	}
	if !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return "", fmt.Errorf("%w: %q", ErrUnsupportedScheme, u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: %q", ErrEmptyHost, u.String())
	}
	return NormalizeHost(u.Host, u.Scheme)
}

// RegistrableDomain returns the registrable domain (eTLD+1) of host, a
// host as NormalizeHost returns it, per the public suffix list including its
// private section: blog.example.co.uk gives example.co.uk, but
// user.github.io stays user.github.io since github.io is a suffix. The port
// is dropped. IP literals, single-label hosts, and hosts that are
// themselves a public suffix (co.uk) are returned as they are, without
// their port. It returns no error: a host it cannot place is its own domain.
func RegistrableDomain(host string) string {
	h := stripPort(host)
	if h == "" || h[0] == '[' {
		return h
	}
	h = strings.TrimSuffix(h, ".")
	if strings.IndexByte(h, '.') < 0 {
		return h
	}
	if MayBeIP(h) {
		if _, err := netip.ParseAddr(h); err == nil {
			return h
		}
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}

// MayBeIP reports whether netip.ParseAddr could accept h: an IPv4
// address ends in a digit, an IPv6 one holds a colon. It spares a host
// name ParseAddr's error, which allocates, a few times per link.
func MayBeIP(h string) bool {
	if h == "" {
		return false
	}
	c := h[len(h)-1]
	return '0' <= c && c <= '9' || strings.IndexByte(h, ':') >= 0
}

// stripPort drops a trailing ":port" from a host. Unbracketed IPv6 (several
// colons) is left alone.
func stripPort(host string) string {
	if host != "" && host[0] == '[' {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			return host[:i+1]
		}
		return host
	}
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.IndexByte(host[:i], ':') >= 0 {
		return host
	}
	return host[:i]
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port". The
// brackets stay on the host so callers know it is an IPv6 literal. An
// unbracketed host with a colon in it is malformed.
func splitHostPort(hostport string) (host, port string, ok bool) {
	if hostport[0] == '[' {
		i := strings.IndexByte(hostport, ']')
		if i < 0 {
			return "", "", false
		}
		host, rest := hostport[:i+1], hostport[i+1:]
		if rest == "" {
			return host, "", true
		}
		if rest[0] != ':' {
			return "", "", false
		}
		return host, rest[1:], true
	}
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 {
		return hostport, "", true
	}
	if strings.IndexByte(hostport[:i], ':') >= 0 {
		return "", "", false
	}
	return hostport[:i], hostport[i+1:], true
}

// canonicalPort returns port in decimal without leading zeros, or "" when it
// is empty or the default port of scheme.
func canonicalPort(port, scheme string) (string, bool) {
	if port == "" {
		return "", true
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return "", false
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return "", false
		}
	}
	switch {
	case n == 80 && strings.EqualFold(scheme, "http"),
		n == 443 && strings.EqualFold(scheme, "https"):
		return "", true
	case len(port) > 1 && port[0] == '0':
		return strconv.Itoa(n), true
	}
	return port, true
}

// canonicalIPv6 turns "[addr]" into its RFC 5952 form, brackets kept.
func canonicalIPv6(host string) (string, error) {
	inner := host[1 : len(host)-1]
	if strings.IndexByte(inner, '%') >= 0 {
		return "", ErrInvalidHost // zones mean nothing off the local link
	}
	a, err := netip.ParseAddr(inner)
	if err != nil || !a.Is6() {
		return "", ErrInvalidHost
	}
	var buf [64]byte
	b := a.AppendTo(buf[:0])
	if string(b) == inner {
		return host, nil
	}
	return "[" + string(b) + "]", nil
}

// canonicalName normalises a non-bracketed host: a DNS name or an IPv4
// address in any form the URL Standard accepts.
func canonicalName(host string) (string, error) {
	ascii, lower := true, true
	for i := 0; i < len(host); i++ {
		c := host[i]
		if c >= 0x80 {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			lower = false
		}
	}
	switch {
	case !ascii:
		// IDNA would turn invalid UTF-8 into U+FFFD and encode it.
		if !utf8.ValidString(host) {
			return "", ErrInvalidHost
		}
		h, err := idnaProfile.ToASCII(host)
		if err != nil {
			return "", ErrInvalidHost
		}
		host = h
	case !lower:
		host = strings.ToLower(host)
	}
	// Strip the root dot after IDNA, which maps "。" and "．" to '.'.
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", ErrEmptyHost
	}
	if endsInNumber(host) {
		// netip accepts only the canonical dotted-quad form: no allocation
		// for the common case.
		if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
			return host, nil
		}
		a, ok := parseIPv4(host)
		if !ok {
			return "", ErrInvalidHost
		}
		return a.String(), nil
	}
	return host, checkName(host)
}

// checkName reports whether host, lowercase ASCII without root dot, is a
// name weaver accepts.
func checkName(host string) error {
	label := 0
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			label++
			if label > maxLabelLen {
				return ErrHostTooLong
			}
		case c == '.':
			if label == 0 {
				return ErrInvalidHost
			}
			label = 0
		default:
			return ErrInvalidHost
		}
	}
	if label == 0 {
		return ErrInvalidHost
	}
	if len(host) > maxHostLen {
		return ErrHostTooLong
	}
	return nil
}

// endsInNumber is the URL Standard's test for a host to be parsed as IPv4:
// its last label is all digits, or is a valid IPv4 number (0x...). host
// has no root dot left.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	digits := true
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL Standard's IPv4 parser: 1 to 4 dot-separated
// numbers; all but the last must fit a byte, the last fills what is left.
func parseIPv4(host string) (netip.Addr, bool) {
	var parts [4]uint64
	n := 0
	for {
		i := strings.IndexByte(host, '.')
		part := host
		if i >= 0 {
			part = host[:i]
		}
		if n == len(parts) {
			return netip.Addr{}, false
		}
		v, ok := parseIPv4Number(part)
		if !ok {
			return netip.Addr{}, false
		}
		parts[n] = v
		n++
		if i < 0 {
			break
		}
		host = host[i+1:]
	}
	for _, v := range parts[:n-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
	}
	if parts[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	ip := parts[n-1]
	for i, v := range parts[:n-1] {
		ip += v << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// parseIPv4Number reads one part of an IPv4 host: decimal, 0x-hex (where a
// bare "0x" is 0) or 0-octal. Values past 2^32 are clamped to 2^32, which
// every caller rejects, so long inputs cannot overflow.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		v = min(v*base+d, 1<<32)
	}
	return v, true
}
