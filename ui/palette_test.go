package ui_test

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// lab is a colour in CIELAB (D65).
type lab struct{ L, A, B float64 }

// hexLab converts #rrggbb (sRGB) to CIELAB under D65.
func hexLab(t *testing.T, hex string) lab {
	t.Helper()
	if len(hex) != 7 || hex[0] != '#' {
		t.Fatalf("colour %q: want #rrggbb", hex)
	}
	var c [3]float64
	for i := range c {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		s := float64(v) / 255
		if s <= 0.04045 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	x := (0.4124564*c[0] + 0.3575761*c[1] + 0.1804375*c[2]) / 0.95047
	y := 0.2126729*c[0] + 0.7151522*c[1] + 0.0721750*c[2]
	z := (0.0193339*c[0] + 0.1191920*c[1] + 0.9503041*c[2]) / 1.08883
	f := func(v float64) float64 {
		if v > 216.0/24389 {
			return math.Cbrt(v)
		}
		return (24389.0/27*v + 16) / 116
	}
	return lab{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// ciede2000 is the CIEDE2000 colour difference of two CIELAB colours
// (Sharma, Wu and Dalal, 2005), with kL = kC = kH = 1.
func ciede2000(p, q lab) float64 {
	rad := math.Pi / 180
	c1, c2 := math.Hypot(p.A, p.B), math.Hypot(q.A, q.B)
	cb7 := math.Pow((c1+c2)/2, 7)
	g := 0.5 * (1 - math.Sqrt(cb7/(cb7+math.Pow(25, 7))))
	a1, a2 := (1+g)*p.A, (1+g)*q.A
	c1p, c2p := math.Hypot(a1, p.B), math.Hypot(a2, q.B)
	hue := func(b, a float64) float64 {
		if a == 0 && b == 0 {
			return 0
		}
		h := math.Atan2(b, a) / rad
		if h < 0 {
			h += 360
		}
		return h
	}
	h1, h2 := hue(p.B, a1), hue(q.B, a2)
	dL, dC := q.L-p.L, c2p-c1p
	var dh float64
	switch {
	case c1p*c2p == 0:
	case math.Abs(h2-h1) <= 180:
		dh = h2 - h1
	case h2-h1 > 180:
		dh = h2 - h1 - 360
	default:
		dh = h2 - h1 + 360
	}
	dH := 2 * math.Sqrt(c1p*c2p) * math.Sin(dh/2*rad)
	lb, cb := (p.L+q.L)/2, (c1p+c2p)/2
	var hb float64
	switch {
	case c1p*c2p == 0:
		hb = h1 + h2
	case math.Abs(h1-h2) <= 180:
		hb = (h1 + h2) / 2
	case h1+h2 < 360:
		hb = (h1 + h2 + 360) / 2
	default:
		hb = (h1 + h2 - 360) / 2
	}
	tt := 1 - 0.17*math.Cos((hb-30)*rad) + 0.24*math.Cos(2*hb*rad) + 0.32*math.Cos((3*hb+6)*rad) - 0.20*math.Cos((4*hb-63)*rad)
	dTheta := 30 * math.Exp(-math.Pow((hb-275)/25, 2))
	cb7p := math.Pow(cb, 7)
	rc := 2 * math.Sqrt(cb7p/(cb7p+math.Pow(25, 7)))
	sl := 1 + 0.015*(lb-50)*(lb-50)/math.Sqrt(20+(lb-50)*(lb-50))
	sc := 1 + 0.045*cb
	sh := 1 + 0.015*cb*tt
	rt := -math.Sin(2*dTheta*rad) * rc
	return math.Sqrt(math.Pow(dL/sl, 2) + math.Pow(dC/sc, 2) + math.Pow(dH/sh, 2) + rt*(dC/sc)*(dH/sh))
}

// TestCIEDE2000: the formula gives the differences of Sharma et al.'s
// test data (pairs 1, 7, 17 and 25 of their table).
func TestCIEDE2000(t *testing.T) {
	for _, c := range []struct {
		p, q lab
		want float64
	}{
		{lab{50, 2.6772, -79.7751}, lab{50, 0, -82.7485}, 2.0425},
		{lab{50, 0, 0}, lab{50, -1, 2}, 2.3669},
		{lab{50, 2.5, 0}, lab{73, 25, -18}, 27.1492},
		{lab{60.2574, -34.0099, 36.2677}, lab{60.4626, -34.1751, 39.4387}, 1.2644},
	} {
		if got := ciede2000(c.p, c.q); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("ΔE00(%v, %v) = %.4f, want %.4f", c.p, c.q, got, c.want)
		}
	}
}

// TestPalette: the map's first twelve community colours (PALETTE in
// src/colours.js, which TestBundle_UpToDate ties to the bundle) can be
// told apart: every two differ by at least 15 in CIEDE2000 (2.3 is a
// just-noticeable difference; 15 apart, two dots a few pixels wide read
// as different colours at a glance), each differs by at least 20 from the
// page's background, and by at least 10 from the greys the page gives
// hosts of no community and hosts dimmed.
func TestPalette(t *testing.T) {
	src, err := os.ReadFile("src/colours.js")
	if err != nil {
		t.Fatal(err)
	}
	constant := func(name string) []string {
		m := regexp.MustCompile(`(?s)export const ` + name + ` = (\[.*?\]|'#[0-9a-f]{6}')`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("src/colours.js: no %s", name)
		}
		return regexp.MustCompile(`#[0-9a-fA-F]{6}`).FindAllString(string(m[1]), -1)
	}
	palette := constant("PALETTE")
	if len(palette) < 12 {
		t.Fatalf("the palette has %d colours, want 12", len(palette))
	}
	palette = palette[:12]
	least := math.Inf(1)
	for i, p := range palette {
		for _, q := range palette[i+1:] {
			d := ciede2000(hexLab(t, p), hexLab(t, q))
			if d < 15 {
				t.Errorf("%s and %s differ by %.1f in CIEDE2000, want at least 15", p, q, d)
			}
			least = min(least, d)
		}
	}
	html, err := os.ReadFile("src/map.html")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`html, body \{[^}]*background: (#[0-9a-f]{6})`).FindSubmatch(html)
	if m == nil {
		t.Fatal("src/map.html: no background on html, body")
	}
	background := string(m[1])
	greys := append(constant("NO_COMMUNITY"), constant("DIMMED")...)
	for _, p := range palette {
		if d := ciede2000(hexLab(t, p), hexLab(t, background)); d < 20 {
			t.Errorf("%s differs from the background %s by %.1f, want at least 20", p, background, d)
		}
		for _, g := range greys {
			if d := ciede2000(hexLab(t, p), hexLab(t, g)); d < 10 {
				t.Errorf("%s differs from the grey %s by %.1f, want at least 10", p, g, d)
			}
		}
	}
	t.Logf("the palette's closest two colours differ by %.1f in CIEDE2000", least)
}
