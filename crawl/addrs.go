package crawl

import (
	"net/netip"
)

// specialRange is one entry of IANA's IPv4 or IPv6 Special-Purpose
// Address Registry (RFC 6890 and its updates), with its "Globally
// Reachable" column and the RFC that made it.
type specialRange struct {
	prefix    netip.Prefix
	reachable bool
	rfc       string
}

// specialRanges are the registries' entries as of 2025: those not
// globally reachable are refused, the most specific entry deciding
// (192.0.0.9/32 is reachable inside 192.0.0.0/24). Entries whose
// reachability the registry leaves open (6to4, Teredo, the deprecated
// 6to4 relay anycast) are not refused as a whole; an address that embeds
// an IPv4 address is judged by it (embeddedV4). Multicast, which the
// registries do not list, is refused besides.
var specialRanges = []specialRange{
	// IPv4 Special-Purpose Address Registry.
	{pfx("0.0.0.0/8"), false, "RFC 791"},           // "this network"
	{pfx("0.0.0.0/32"), false, "RFC 1122"},         // "this host on this network"
	{pfx("10.0.0.0/8"), false, "RFC 1918"},         // private-use
	{pfx("100.64.0.0/10"), false, "RFC 6598"},      // shared address space (carrier-grade NAT)
	{pfx("127.0.0.0/8"), false, "RFC 1122"},        // loopback
	{pfx("169.254.0.0/16"), false, "RFC 3927"},     // link local (cloud metadata: 169.254.169.254)
	{pfx("172.16.0.0/12"), false, "RFC 1918"},      // private-use
	{pfx("192.0.0.0/24"), false, "RFC 6890"},       // IETF protocol assignments
	{pfx("192.0.0.0/29"), false, "RFC 7335"},       // IPv4 service continuity prefix
	{pfx("192.0.0.8/32"), false, "RFC 7600"},       // IPv4 dummy address
	{pfx("192.0.0.9/32"), true, "RFC 7723"},        // Port Control Protocol anycast
	{pfx("192.0.0.10/32"), true, "RFC 8155"},       // TURN anycast
	{pfx("192.0.0.170/32"), false, "RFC 8880"},     // NAT64/DNS64 discovery
	{pfx("192.0.0.171/32"), false, "RFC 8880"},     // NAT64/DNS64 discovery
	{pfx("192.0.2.0/24"), false, "RFC 5737"},       // documentation (TEST-NET-1)
	{pfx("192.31.196.0/24"), true, "RFC 7535"},     // AS112-v4
	{pfx("192.52.193.0/24"), true, "RFC 7450"},     // AMT
	{pfx("192.168.0.0/16"), false, "RFC 1918"},     // private-use
	{pfx("192.175.48.0/24"), true, "RFC 7534"},     // direct delegation AS112 service
	{pfx("198.18.0.0/15"), false, "RFC 2544"},      // benchmarking
	{pfx("198.51.100.0/24"), false, "RFC 5737"},    // documentation (TEST-NET-2)
	{pfx("203.0.113.0/24"), false, "RFC 5737"},     // documentation (TEST-NET-3)
	{pfx("240.0.0.0/4"), false, "RFC 1112"},        // reserved
	{pfx("255.255.255.255/32"), false, "RFC 8190"}, // limited broadcast

	// IPv6 Special-Purpose Address Registry.
	{pfx("::1/128"), false, "RFC 4291"},          // loopback
	{pfx("::/128"), false, "RFC 4291"},           // unspecified
	{pfx("::ffff:0:0/96"), false, "RFC 4291"},    // IPv4-mapped: judged by the embedded address first
	{pfx("64:ff9b::/96"), true, "RFC 6052"},      // IPv4-IPv6 translation (NAT64): judged by the embedded address
	{pfx("64:ff9b:1::/48"), false, "RFC 8215"},   // local-use IPv4/IPv6 translation
	{pfx("100::/64"), false, "RFC 6666"},         // discard-only
	{pfx("100:0:0:1::/64"), false, "RFC 9780"},   // dummy IPv6 prefix
	{pfx("2001::/23"), false, "RFC 2928"},        // IETF protocol assignments
	{pfx("2001::/32"), true, "RFC 4380"},         // Teredo (reachability N/A): judged by the client's embedded address
	{pfx("2001:1::1/128"), true, "RFC 7723"},     // Port Control Protocol anycast
	{pfx("2001:1::2/128"), true, "RFC 8155"},     // TURN anycast
	{pfx("2001:1::3/128"), true, "RFC 9665"},     // DNS-SD service registration protocol anycast
	{pfx("2001:2::/48"), false, "RFC 5180"},      // benchmarking
	{pfx("2001:3::/32"), true, "RFC 7450"},       // AMT
	{pfx("2001:4:112::/48"), true, "RFC 7535"},   // AS112-v6
	{pfx("2001:10::/28"), false, "RFC 4843"},     // deprecated ORCHID
	{pfx("2001:20::/28"), true, "RFC 7343"},      // ORCHIDv2
	{pfx("2001:30::/28"), true, "RFC 9374"},      // drone remote ID protocol entity tags
	{pfx("2001:db8::/32"), false, "RFC 3849"},    // documentation
	{pfx("2620:4f:8000::/48"), true, "RFC 7534"}, // direct delegation AS112 service
	{pfx("3fff::/20"), false, "RFC 9637"},        // documentation
	{pfx("5f00::/16"), false, "RFC 9602"},        // segment routing (SRv6) SIDs
	{pfx("fc00::/7"), false, "RFC 4193"},         // unique-local
	{pfx("fe80::/10"), false, "RFC 4291"},        // link-local unicast
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// Prefixes that embed an IPv4 address (embeddedV4).
var (
	mapped     = pfx("::ffff:0:0/96")  // RFC 4291: the address, the last 32 bits
	compatible = pfx("::/96")          // RFC 4291 (deprecated): the last 32 bits
	nat64      = pfx("64:ff9b::/96")   // RFC 6052: the last 32 bits
	nat64Local = pfx("64:ff9b:1::/48") // RFC 8215: the last 32 bits
	sixToFour  = pfx("2002::/16")      // RFC 3056: bits 16 to 47
	teredo     = pfx("2001::/32")      // RFC 4380: the client's address, the last 32 bits inverted
	multicast4 = pfx("224.0.0.0/4")
	multicast6 = pfx("ff00::/8")
)

// embeddedV4 returns the IPv4 address an IPv6 address embeds (mapped,
// compatible, NAT64, 6to4, Teredo's client), when it embeds one.
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	last := [4]byte{b[12], b[13], b[14], b[15]}
	switch {
	case mapped.Contains(ip), nat64.Contains(ip), nat64Local.Contains(ip):
		return netip.AddrFrom4(last), true
	case compatible.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4(last), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case teredo.Contains(ip):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// special returns the most specific registry entry holding ip.
func special(ip netip.Addr) (specialRange, bool) {
	var best specialRange
	found := false
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) && (!found || r.prefix.Bits() > best.prefix.Bits()) {
			best, found = r, true
		}
	}
	return best, found
}

// forbidden reports whether ip is not a globally reachable unicast
// address: an entry of the Special-Purpose Address Registries not
// globally reachable, multicast, or an IPv6 address whose embedded IPv4
// address is forbidden. A zone (fe80::1%eth0) changes nothing.
func forbidden(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip4 := ip.Unmap()
		return forbidden(ip4)
	}
	if multicast4.Contains(ip) || multicast6.Contains(ip) {
		return true
	}
	if ip.Is6() {
		if v4, ok := embeddedV4(ip); ok && forbidden(v4) {
			return true
		}
	}
	r, ok := special(ip)
	return ok && !r.reachable
}
