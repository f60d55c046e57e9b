package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
)

// CrawlName names a cluster crawl by its seed set: the first 16 hex digits
// of the SHA-256 of its seeds, normalised (scheme and host as the crawler
// reads them), sorted and deduplicated. Every shard given the same seeds
// computes the same name, whatever their order.
func CrawlName(seeds []string) (string, error) {
	var norm []string
	for _, s := range seeds {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return "", fmt.Errorf("seed %q: %w", s, err)
		}
		h, err := graph.HostOf(u)
		if err != nil {
			return "", fmt.Errorf("seed %q: %w", s, err)
		}
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		norm = append(norm, strings.ToLower(u.Scheme)+"://"+h+p)
	}
	slices.Sort(norm)
	norm = slices.Compact(norm)
	sum := sha256.Sum256([]byte(strings.Join(norm, "\n")))
	return hex.EncodeToString(sum[:8]), nil
}

// Names of the JetStream objects of a crawl.
func streamName(crawlName string) string { return "WEAVER_" + crawlName }

func bucketName(crawlName string) string { return "weaver_" + crawlName }

func subject(crawlName string, k int) string {
	return "weaver." + crawlName + ".links." + strconv.Itoa(k)
}

func stateKey(k int) string { return "shard." + strconv.Itoa(k) }

// validName reports whether s can name a crawl: it becomes part of
// stream, bucket and subject names.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func sortedSeeds(seeds []string) []string {
	out := slices.Clone(seeds)
	slices.Sort(out)
	return slices.Compact(out)
}

// Redact returns urls (a comma-separated list) without their passwords,
// for logs and errors.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}
