package crawl

import (
	"fmt"
	"strconv"
	"strings"
)

// byteKeys are the config keys that count bytes: a flag or the
// environment may give them with a unit (512MB, 1GiB), a config file as
// a number or such a string.
var byteKeys = []string{"warc_max_size", "min_free_space"}

// byteUnits are the units ParseBytes takes, by their multiple: SI
// powers of 1000 and binary powers of 1024.
var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseBytes reads a size: a whole number of bytes, or a number and a
// unit (512MB = 512,000,000; 1GiB or 1G = 2^30; 1.5GB). It returns an
// error for anything else, or a negative size.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	mult, ok := byteUnits[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("%q is not a size (bytes, or with a unit: 512MB, 1GiB)", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n > (1<<63-1)/mult {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*float64(mult) >= 1<<63 {
		return 0, fmt.Errorf("%q is not a size (bytes, or with a unit: 512MB, 1GiB)", s)
	}
	return int64(f * float64(mult)), nil
}

// FormatBytes writes n bytes for people: 512 MB, 1.5 GB, 812 kB, 300 B
// (SI units).
func FormatBytes(n int64) string {
	switch {
	case n >= 1e12:
		return trimUnit(float64(n)/1e12, "TB")
	case n >= 1e9:
		return trimUnit(float64(n)/1e9, "GB")
	case n >= 1e6:
		return trimUnit(float64(n)/1e6, "MB")
	case n >= 1e3:
		return trimUnit(float64(n)/1e3, "kB")
	}
	return fmt.Sprintf("%d B", n)
}

func trimUnit(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " " + unit
}
