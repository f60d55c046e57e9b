package crawl

import (
	"net/netip"
	"testing"
)

// TestForbidden_Registries: an address of each entry of IANA's IPv4 and
// IPv6 Special-Purpose Address Registries, written here from the
// registries (not from specialRanges), refused when the entry is not
// globally reachable; the most specific entry decides; the IPv6 forms
// that embed an IPv4 address are judged by it; multicast is refused.
func TestForbidden_Registries(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
		why  string
	}{
		{"0.1.2.3", true, "this network, RFC 791"},
		{"0.0.0.0", true, "this host, RFC 1122"},
		{"10.1.2.3", true, "private-use, RFC 1918"},
		{"100.64.0.1", true, "shared address space, RFC 6598"},
		{"100.127.255.254", true, "shared address space, RFC 6598"},
		{"100.128.0.1", false, "after shared address space"},
		{"127.0.0.1", true, "loopback, RFC 1122"},
		{"169.254.169.254", true, "link local, RFC 3927"},
		{"172.16.0.1", true, "private-use, RFC 1918"},
		{"172.32.0.1", false, "after 172.16.0.0/12"},
		{"192.0.0.100", true, "IETF protocol assignments, RFC 6890"},
		{"192.0.0.1", true, "IPv4 service continuity prefix, RFC 7335"},
		{"192.0.0.8", true, "IPv4 dummy address, RFC 7600"},
		{"192.0.0.9", false, "PCP anycast, RFC 7723: reachable inside 192.0.0.0/24"},
		{"192.0.0.10", false, "TURN anycast, RFC 8155: reachable inside 192.0.0.0/24"},
		{"192.0.0.170", true, "NAT64/DNS64 discovery, RFC 8880"},
		{"192.0.0.171", true, "NAT64/DNS64 discovery, RFC 8880"},
		{"192.0.2.1", true, "TEST-NET-1, RFC 5737"},
		{"192.31.196.1", false, "AS112-v4, RFC 7535"},
		{"192.52.193.1", false, "AMT, RFC 7450"},
		{"192.88.99.1", false, "deprecated 6to4 relay anycast, RFC 7526: reachability N/A"},
		{"192.168.1.1", true, "private-use, RFC 1918"},
		{"192.175.48.1", false, "AS112 direct delegation, RFC 7534"},
		{"198.18.0.1", true, "benchmarking, RFC 2544"},
		{"198.19.255.1", true, "benchmarking, RFC 2544"},
		{"198.51.100.1", true, "TEST-NET-2, RFC 5737"},
		{"203.0.113.1", true, "TEST-NET-3, RFC 5737"},
		{"240.0.0.1", true, "reserved, RFC 1112"},
		{"255.255.255.255", true, "limited broadcast, RFC 8190"},
		{"224.0.0.1", true, "multicast"},
		{"239.255.255.250", true, "multicast"},
		{"8.8.8.8", false, "public"},
		{"::1", true, "loopback, RFC 4291"},
		{"::", true, "unspecified, RFC 4291"},
		{"::ffff:10.0.0.1", true, "IPv4-mapped private"},
		{"::ffff:8.8.8.8", false, "IPv4-mapped public"},
		{"::a9fe:a9fe", true, "IPv4-compatible 169.254.169.254"},
		{"::808:808", false, "IPv4-compatible public"},
		{"64:ff9b::a9fe:a9fe", true, "NAT64 of 169.254.169.254, RFC 6052"},
		{"64:ff9b::808:808", false, "NAT64 of a public address, RFC 6052"},
		{"64:ff9b:1::808:808", true, "local-use IPv4/IPv6 translation, RFC 8215"},
		{"100::1", true, "discard-only, RFC 6666"},
		{"100:0:0:1::1", true, "dummy IPv6 prefix, RFC 9780"},
		{"2001:1::4", true, "IETF protocol assignments, RFC 2928"},
		{"2001:1::1", false, "PCP anycast, RFC 7723"},
		{"2001:1::2", false, "TURN anycast, RFC 8155"},
		{"2001:1::3", false, "DNS-SD SRP anycast, RFC 9665"},
		{"2001:2::1", true, "benchmarking, RFC 5180"},
		{"2001:3::1", false, "AMT, RFC 7450"},
		{"2001:4:112::1", false, "AS112-v6, RFC 7535"},
		{"2001:10::1", true, "deprecated ORCHID, RFC 4843"},
		{"2001:20::1", false, "ORCHIDv2, RFC 7343"},
		{"2001:30::1", false, "drone remote ID, RFC 9374"},
		{"2001:db8::1", true, "documentation, RFC 3849"},
		{"2620:4f:8000::1", false, "AS112 direct delegation, RFC 7534"},
		{"3fff::1", true, "documentation, RFC 9637"},
		{"5f00::1", true, "SRv6 SIDs, RFC 9602"},
		{"fc00::1", true, "unique-local, RFC 4193"},
		{"fd12:3456::1", true, "unique-local, RFC 4193"},
		{"fe80::1", true, "link-local, RFC 4291"},
		{"fe80::1%eth0", true, "link-local with a zone"},
		{"ff02::1", true, "multicast"},
		{"2002:a9fe:a9fe::1", true, "6to4 of 169.254.169.254, RFC 3056"},
		{"2002:808:808::1", false, "6to4 of a public address, RFC 3056"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true, "Teredo, client 192.0.2.45 (TEST-NET-1), RFC 4380"},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false, "Teredo, client 8.8.8.8, RFC 4380"},
		{"2606:4700::1111", false, "public"},
	} {
		ip := netip.MustParseAddr(c.addr)
		if got := forbidden(ip); got != c.want {
			t.Errorf("%s (%s): forbidden %v, want %v", c.addr, c.why, got, c.want)
		}
	}
	for _, h := range []string{"[::ffff:127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "198.18.0.1", "[2002:a9fe:a9fe::]"} {
		if !forbiddenHost(h) {
			t.Errorf("forbiddenHost(%q) = false", h)
		}
	}
}
