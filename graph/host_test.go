package graph_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// normalizeHostCases drive TestNormalizeHost and seed FuzzNormalizeHost.
// want is ignored when err is set.
var normalizeHostCases = []struct {
	name   string
	in     string
	scheme string
	want   string
	err    error
}{
	// Case and IDNA.
	{"lowercase", "example.com", "http", "example.com", nil},
	{"uppercase", "EXAMPLE.COM", "http", "example.com", nil},
	{"mixed case", "Www.Example.Com", "https", "www.example.com", nil},
	{"idna", "Bücher.example", "https", "xn--bcher-kva.example", nil},
	{"idna uppercase", "BÜCHER.example", "https", "xn--bcher-kva.example", nil},
	{"idna nontransitional sharp s", "faß.de", "http", "xn--fa-hia.de", nil},
	{"idna japanese", "例え.テスト", "http", "xn--r8jz45g.xn--zckzah", nil},
	{"idna fullwidth", "ｅｘａｍｐｌｅ．ｃｏｍ", "http", "example.com", nil},
	{"idna ignored soft hyphen", "a\u00adb.com", "http", "ab.com", nil},
	{"punycode kept", "xn--bcher-kva.example", "http", "xn--bcher-kva.example", nil},
	{"punycode uppercase", "XN--BCHER-KVA.Example", "http", "xn--bcher-kva.example", nil},
	{"idna with port", "Bücher.example:8080", "http", "xn--bcher-kva.example:8080", nil},
	{"idna joiner", "\u200d.example", "http", "", graph.ErrInvalidHost},
	{"idna replacement char", "\ufffd.com", "http", "", graph.ErrInvalidHost},
	{"idna bidi", "\u064aa", "http", "", graph.ErrInvalidHost},
	{"idna bad punycode mixed", "xn--a.ß", "http", "", graph.ErrInvalidHost},
	{"idna nbsp", "www\u00a0.example.com", "http", "", graph.ErrInvalidHost},
	{"idna fullwidth colon", "example.com：80", "http", "", graph.ErrInvalidHost},

	// Trailing dots and empty labels.
	{"trailing dot", "example.com.", "http", "example.com", nil},
	{"trailing dot with port", "example.com.:8080", "http", "example.com:8080", nil},
	{"trailing ideographic dot", "example.com\u3002", "http", "example.com", nil},
	{"two trailing dots", "example.com..", "http", "", graph.ErrInvalidHost},
	{"empty label", "a..b", "http", "", graph.ErrInvalidHost},
	{"leading dot", ".example.com", "http", "", graph.ErrInvalidHost},
	{"root only", ".", "http", "", graph.ErrEmptyHost},

	// Ports.
	{"http default port", "example.com:80", "http", "example.com", nil},
	{"https default port", "example.com:443", "https", "example.com", nil},
	{"https port on http", "example.com:443", "http", "example.com:443", nil},
	{"http port on https", "example.com:80", "https", "example.com:80", nil},
	{"other port https", "example.com:8443", "https", "example.com:8443", nil},
	{"other port http", "Example.com:8080", "http", "example.com:8080", nil},
	{"empty port", "example.com:", "http", "example.com", nil},
	{"leading zeros default", "example.com:0080", "http", "example.com", nil},
	{"leading zeros", "example.com:08080", "http", "example.com:8080", nil},
	{"max port", "example.com:65535", "https", "example.com:65535", nil},
	{"port too big", "example.com:65536", "http", "", graph.ErrInvalidHost},
	{"port huge", "example.com:99999999999999999999999", "http", "", graph.ErrInvalidHost},
	{"port name", "example.com:http", "http", "", graph.ErrInvalidHost},
	{"port negative", "example.com:-1", "http", "", graph.ErrInvalidHost},
	{"two ports", "example.com:8080:80", "http", "", graph.ErrInvalidHost},
	{"unknown scheme keeps port", "example.com:80", "ftp", "example.com:80", nil},

	// IPv4.
	{"ipv4", "127.0.0.1", "http", "127.0.0.1", nil},
	{"ipv4 default port", "192.0.2.1:80", "http", "192.0.2.1", nil},
	{"ipv4 other port", "192.0.2.1:8080", "http", "192.0.2.1:8080", nil},
	{"ipv4 two parts", "127.1", "http", "127.0.0.1", nil},
	{"ipv4 three parts", "10.1.258", "http", "10.1.1.2", nil},
	{"ipv4 hex", "0x7f.1", "http", "127.0.0.1", nil},
	{"ipv4 hex upper", "0X7F.0.0.1", "http", "127.0.0.1", nil},
	{"ipv4 one number", "2130706433", "http", "127.0.0.1", nil},
	{"ipv4 one hex number", "0x7F000001", "http", "127.0.0.1", nil},
	{"ipv4 octal", "0300.0250.0.1", "http", "192.168.0.1", nil},
	{"ipv4 leading zeros are octal", "010.0.0.1", "http", "8.0.0.1", nil},
	{"ipv4 bare 0x", "0x.0x.0x.0x", "http", "0.0.0.0", nil},
	{"ipv4 trailing dot", "127.0.0.1.", "http", "127.0.0.1", nil},
	{"ipv4 fullwidth", "１２７.０.０.１", "http", "127.0.0.1", nil},
	{"ipv4 octet too big", "256.0.0.1", "http", "", graph.ErrInvalidHost},
	{"ipv4 last too big", "1.2.65536", "http", "", graph.ErrInvalidHost},
	{"ipv4 number too big", "4294967296", "http", "", graph.ErrInvalidHost},
	{"ipv4 five parts", "1.2.3.4.5", "http", "", graph.ErrInvalidHost},
	{"ipv4 bad octal", "08.0.0.1", "http", "", graph.ErrInvalidHost},
	{"ipv4 empty part", "1..2", "http", "", graph.ErrInvalidHost},
	{"name ending in number", "example.123", "http", "", graph.ErrInvalidHost},
	{"name ending in hex", "example.0x1", "http", "", graph.ErrInvalidHost},
	{"digits inside a label", "123.example", "http", "123.example", nil},

	// IPv6.
	{"ipv6", "[2001:db8::1]", "http", "[2001:db8::1]", nil},
	{"ipv6 uncompressed", "[2001:DB8:0:0:0:0:0:1]", "http", "[2001:db8::1]", nil},
	{"ipv6 loopback", "[::1]", "http", "[::1]", nil},
	{"ipv6 default port", "[2001:db8::1]:443", "https", "[2001:db8::1]", nil},
	{"ipv6 other port", "[2001:DB8::1]:8443", "https", "[2001:db8::1]:8443", nil},
	{"ipv6 zone", "[fe80::1%eth0]", "http", "", graph.ErrInvalidHost},
	{"ipv6 escaped zone", "[fe80::1%25eth0]", "http", "", graph.ErrInvalidHost},
	{"ipv6 bracketed ipv4", "[127.0.0.1]", "http", "", graph.ErrInvalidHost},
	{"ipv6 unclosed", "[::1", "http", "", graph.ErrInvalidHost},
	{"ipv6 junk after bracket", "[::1]x", "http", "", graph.ErrInvalidHost},
	{"ipv6 bad", "[::g]", "http", "", graph.ErrInvalidHost},
	{"ipv6 unbracketed", "2001:db8::1", "http", "", graph.ErrInvalidHost},
	{"ipv6 empty brackets", "[]", "http", "", graph.ErrInvalidHost},

	// Lengths.
	{"label 63", strings.Repeat("a", 63) + ".com", "http", strings.Repeat("a", 63) + ".com", nil},
	{"label 64", strings.Repeat("a", 64) + ".com", "http", "", graph.ErrHostTooLong},
	{"host 253", host253, "http", host253, nil},
	{"host 253 root dot", host253 + ".", "http", host253, nil},
	{"host 254", host253 + "d", "http", "", graph.ErrHostTooLong},
	{"idna label too long", strings.Repeat("ü", 60) + ".de", "http", "", graph.ErrHostTooLong},
	{"huge input", strings.Repeat("a.", 600) + "com", "http", "", graph.ErrHostTooLong},

	// Characters.
	{"underscore", "_dmarc.example.com", "http", "_dmarc.example.com", nil},
	{"underscore inside", "my_host.Example.com", "http", "my_host.example.com", nil},
	{"edge hyphens", "-x.y-.example.com", "http", "-x.y-.example.com", nil},
	{"single label", "LOCALHOST:8080", "http", "localhost:8080", nil},
	{"space", "exa mple.com", "http", "", graph.ErrInvalidHost},
	{"tab", "exa\tmple.com", "http", "", graph.ErrInvalidHost},
	{"nul", "exa\x00mple.com", "http", "", graph.ErrInvalidHost},
	{"del", "exa\x7fmple.com", "http", "", graph.ErrInvalidHost},
	{"less than", "exa<mple.com", "http", "", graph.ErrInvalidHost},
	{"quote", `exa"mple.com`, "http", "", graph.ErrInvalidHost},
	{"braces", "exa{mple}.com", "http", "", graph.ErrInvalidHost},
	{"pipe", "exa|mple.com", "http", "", graph.ErrInvalidHost},
	{"backslash", `exa\mple.com`, "http", "", graph.ErrInvalidHost},
	{"caret", "exa^mple.com", "http", "", graph.ErrInvalidHost},
	{"percent", "exa%41mple.com", "http", "", graph.ErrInvalidHost},
	{"userinfo", "user@example.com", "http", "", graph.ErrInvalidHost},
	{"slash", "example.com/", "http", "", graph.ErrInvalidHost},
	{"invalid utf8", "exa\xffmple.com", "http", "", graph.ErrInvalidHost},

	// Empty.
	{"empty", "", "http", "", graph.ErrEmptyHost},
	{"port only", ":80", "http", "", graph.ErrEmptyHost},
	{"port only https", ":8443", "https", "", graph.ErrEmptyHost},
}

// host253 is a name of exactly 253 bytes: three 63-byte labels and one of 61.
var host253 = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." +
	strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)

func TestNormalizeHost(t *testing.T) {
	if len(host253) != 253 {
		t.Fatalf("len(host253) = %d, want 253", len(host253))
	}
	for _, tc := range normalizeHostCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := graph.NormalizeHost(tc.in, tc.scheme)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("NormalizeHost(%q, %q) = %q, %v; want error %v", tc.in, tc.scheme, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("NormalizeHost(%q, %q) = %q, %v; want %q", tc.in, tc.scheme, got, err, tc.want)
			}
			// A canonical result must be a fixed point.
			again, err := graph.NormalizeHost(got, tc.scheme)
			if err != nil || again != got {
				t.Fatalf("NormalizeHost(%q, %q) = %q, %v; want %q (idempotent)", got, tc.scheme, again, err, got)
			}
		})
	}
}

func TestNormalizeHost_ErrorMessage(t *testing.T) {
	_, err := graph.NormalizeHost("a b.com", "http")
	if got, want := fmt.Sprint(err), `graph: invalid host: "a b.com"`; got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
}

func TestNormalizeHost_NoAllocCanonical(t *testing.T) {
	for _, in := range []string{"www.example.com", "example.com:443", "example.com:8080", "192.0.2.1", "[2001:db8::1]"} {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := graph.NormalizeHost(in, "https"); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("NormalizeHost(%q) allocs = %v, want 0", in, allocs)
		}
	}
}

func TestHostOf(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"https://Example.COM:443/path?q=1", "example.com", nil},
		{"http://example.com:8080/", "example.com:8080", nil},
		{"HTTP://Example.com:80", "example.com", nil},
		{"http://user:pw@Bücher.example/", "xn--bcher-kva.example", nil},
		{"http://[2001:DB8::1]:80/", "[2001:db8::1]", nil},
		{"http://0x7f.1/", "127.0.0.1", nil},
		{"https://example.com.:8443", "example.com:8443", nil},
		{"ftp://example.com/", "", graph.ErrUnsupportedScheme},
		{"mailto:user@example.com", "", graph.ErrUnsupportedScheme},
		{"file:///etc/passwd", "", graph.ErrUnsupportedScheme},
		{"/relative/path", "", graph.ErrUnsupportedScheme},
		{"http:///path", "", graph.ErrEmptyHost},
		{"http:example.com", "", graph.ErrEmptyHost},
		{"http://exa_mple.com:99999/", "", graph.ErrInvalidHost},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", tc.in, err)
		}
		got, err := graph.HostOf(u)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("HostOf(%q) = %q, %v; want error %v", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("HostOf(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := graph.HostOf(nil); !errors.Is(err, graph.ErrEmptyHost) {
		t.Errorf("HostOf(nil) error = %v, want %v", err, graph.ErrEmptyHost)
	}
}

func TestRegistrableDomain(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"www.example.com", "example.com"},
		{"example.com", "example.com"},
		{"a.b.c.example.com:8080", "example.com"},
		{"blog.example.co.uk", "example.co.uk"},
		{"example.co.uk", "example.co.uk"},
		{"co.uk", "co.uk"},
		{"uk", "uk"},
		{"com", "com"},
		{"www.ox.ac.uk", "ox.ac.uk"},
		{"user.github.io", "user.github.io"},
		{"a.user.github.io", "user.github.io"},
		{"github.io", "github.io"},
		{"foo.blogspot.com", "foo.blogspot.com"},
		{"www.foo.blogspot.com:443", "foo.blogspot.com"},
		{"www.city.kawasaki.jp", "city.kawasaki.jp"},
		{"a.b.kawasaki.jp", "a.b.kawasaki.jp"},
		{"www.xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"example.com.", "example.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:8080", "127.0.0.1"},
		{"[2001:db8::1]", "[2001:db8::1]"},
		{"[2001:db8::1]:8443", "[2001:db8::1]"},
		{"localhost", "localhost"},
		{"localhost:8080", "localhost"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := graph.RegistrableDomain(tc.in); got != tc.want {
			t.Errorf("RegistrableDomain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// dataDir is the project's shared test data, outside the module.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		tooltest.Missing(t, "shared test data: %v", err)
	}
	return dir
}

// TestNormalizeHost_WHATWGToASCII runs the WHATWG IDNA host cases through
// NormalizeHost. Our rules are hostname rules (no '=' or empty labels, 63/253
// byte limits, ends-in-number means IPv4), not the URL Standard's, so only
// the cases whose expected output is a DNS name are held to agreement.
func TestNormalizeHost_WHATWGToASCII(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(dataDir(t), "url", "toascii.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The file mixes comment strings with case objects.
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatal(err)
	}
	var total, dnsCases, agree int
	for _, item := range items {
		if len(item) == 0 || item[0] != '{' {
			continue
		}
		var tc struct {
			Input  string  `json:"input"`
			Output *string `json:"output"`
		}
		if err := json.Unmarshal(item, &tc); err != nil {
			t.Fatalf("case %s: %v", item, err)
		}
		total++
		got, panicked, err := normalizeNoPanic(tc.Input, "https")
		if panicked != nil {
			t.Errorf("NormalizeHost(%q) panicked: %v", tc.Input, panicked)
			continue
		}
		switch {
		case tc.Output == nil:
			if hasForbidden(tc.Input) && err == nil {
				t.Errorf("NormalizeHost(%q) = %q, want an error (forbidden character)", tc.Input, got)
			}
		case isDNSName(*tc.Output):
			dnsCases++
			if err == nil && got == *tc.Output {
				agree++
			} else {
				t.Logf("differs: NormalizeHost(%q) = %q, %v; WHATWG %q", tc.Input, got, err, *tc.Output)
			}
		}
	}
	if dnsCases == 0 {
		t.Fatalf("no DNS-name cases among %d", total)
	}
	pct := 100 * float64(agree) / float64(dnsCases)
	t.Logf("toascii.json: %d cases, %d with a DNS-name output, %d agree (%.1f%%)", total, dnsCases, agree, pct)
	if pct < 85 {
		t.Errorf("agreement = %.1f%%, want >= 85%%", pct)
	}
}

func normalizeNoPanic(in, scheme string) (got string, panicked any, err error) {
	defer func() { panicked = recover() }()
	got, err = graph.NormalizeHost(in, scheme)
	return got, nil, err
}

// hasForbidden reports whether s holds a space, a control character or an
// ASCII character no host may contain.
func hasForbidden(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(`<>"{}|\^#%/?@[]`, r)
	})
}

// isDNSName reports whether s is a name of LDH labels, 1 to 63 bytes each,
// at most 253 bytes in all.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func FuzzNormalizeHost(f *testing.F) {
	for _, tc := range normalizeHostCases {
		f.Add(tc.in, tc.scheme == "https")
	}
	f.Fuzz(func(t *testing.T, in string, https bool) {
		scheme := "http"
		if https {
			scheme = "https"
		}
		got, err := graph.NormalizeHost(in, scheme)
		if err != nil {
			if !errors.Is(err, graph.ErrEmptyHost) && !errors.Is(err, graph.ErrHostTooLong) && !errors.Is(err, graph.ErrInvalidHost) {
				t.Fatalf("NormalizeHost(%q, %q) error %v wraps no sentinel", in, scheme, err)
			}
			return
		}
		if len(got) > 253+6 {
			t.Fatalf("NormalizeHost(%q, %q) = %q: %d bytes, want <= 259", in, scheme, got, len(got))
		}
		again, err := graph.NormalizeHost(got, scheme)
		if err != nil || again != got {
			t.Fatalf("NormalizeHost(%q, %q) = %q, %v; want %q (idempotent, from %q)", got, scheme, again, err, got, in)
		}
	})
}

func BenchmarkNormalizeHost(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := graph.NormalizeHost("www.example.com", "https"); err != nil {
			b.Fatal(err)
		}
	}
}
