package fakeweb

import (
	"html"
	"net/url"
	"strings"
)

// ExpectedEdges returns the host graph a correct crawler records when it
// starts from Seed with max_crawls_per_node=1, unlimited depth and the given
// max_outbound_links (0 or less: unlimited) and exclusion (nil: none). Each
// edge has weight 1.
//
// The crawl it models is a breadth-first walk over hosts. A host is crawled
// once; its home page gives no links if the host is not in the web, if its
// robots.txt disallows / for "weaver" (RobotsDisallowEvery, RobotsRedirect),
// or if a fault leaves no page (SlowDrip, EndlessBody, Huge, GzipBomb,
// RedirectLoop, RedirectChain20, ResetMidBody, BinaryHTML; InvalidUTF8 has
// only same-host links). TooMany429 and
// Burst5xx hosts count as crawled after retries. Trap subdomains
// (CalendarTrap) and link-farm hosts (ManyLinks) are not in the web, so the
// walk records edges to them but does not follow them.
//
// Links are selected as the crawler does: each href of an <a> in document
// order is entity-decoded, trimmed of spaces, resolved against the page URL or
// its first <base href>, kept if http or https with a host, reduced to its
// lower-cased host with the default port dropped (keeping brackets on IPv6 and
// any other port), dropped if it is the page's host or excluded, deduplicated,
// and cut to the first maxOutbound.
func (w *Web) ExpectedEdges(maxOutbound int, excluded func(host string) bool) map[[2]string]int {
	edges := make(map[[2]string]int)
	seed := w.sites[w.seedIndex].name
	seen := map[string]bool{seed: true}
	queue := []string{seed}
	for len(queue) > 0 {
		host := queue[0]
		queue = queue[1:]
		i, ok := w.index[host]
		if !ok || !w.allowsHome(i) || w.sites[i].fault&opaque != 0 || w.cfg.CertFaults[host] != CertOK {
			continue
		}
		if s := &w.sites[i]; s.kind == kindTwin {
			// A redirect is the twin's one link, to its host.
			dst := w.sites[s.twin].name
			edges[[2]string{host, dst}] = 1
			if !seen[dst] {
				seen[dst] = true
				queue = append(queue, dst)
			}
			continue
		}
		for _, dst := range SelectHosts(host, w.base(i), w.links(i), maxOutbound, excluded) {
			edges[[2]string{host, dst}] = 1
			if !seen[dst] {
				seen[dst] = true
				queue = append(queue, dst)
			}
		}
	}
	return edges
}

// base returns the href of the first <base href> of host i's home page, or "".
func (w *Web) base(i int) string {
	s := &w.sites[i]
	if s.kind != kindGenerated || s.fault&(opaque|ManyLinks|InvalidUTF8) != 0 {
		return ""
	}
	switch s.base {
	case baseOther:
		return "http://" + w.linkName(s.out[0]) + "/"
	case baseSame:
		return "/blog/"
	}
	return ""
}

// SelectHosts applies the crawler's link selection to the raw hrefs of the
// home page of host, whose first <base href> is base ("" for none): see
// ExpectedEdges. It returns the selected hosts in order.
func SelectHosts(host, base string, hrefs []string, maxOutbound int, excluded func(host string) bool) []string {
	page := &url.URL{Scheme: "http", Host: host, Path: "/"}
	if base != "" {
		if b, err := page.Parse(strings.TrimSpace(html.UnescapeString(base))); err == nil {
			page = b
		}
	}
	seen := make(map[string]bool)
	var out []string
	for _, href := range hrefs {
		if maxOutbound > 0 && len(out) >= maxOutbound {
			break
		}
		u, err := page.Parse(strings.TrimSpace(html.UnescapeString(href)))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			continue
		}
		h := HostKey(u)
		if h == host || seen[h] || (excluded != nil && excluded(h)) {
			continue
		}
		seen[h] = true
		out = append(out, h)
	}
	return out
}

// HostKey returns the host of an absolute http(s) URL as the fake web's
// ground truth names it: lower-cased, without the scheme's default port.
func HostKey(u *url.URL) string {
	h := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "http" && strings.HasSuffix(h, ":80"):
		h = strings.TrimSuffix(h, ":80")
	case u.Scheme == "https" && strings.HasSuffix(h, ":443"):
		h = strings.TrimSuffix(h, ":443")
	}
	return strings.TrimSuffix(h, ".")
}

// excludedDomains are the domains excluded by default, with their subdomains.
var excludedDomains = []string{
	"facebook.com", "twitter.com", "x.com", "instagram.com", "linkedin.com",
	"google-analytics.com", "doubleclick.net",
}

// DefaultExcluded reports whether the crawler's default exclusion drops host:
// facebook.com, twitter.com, x.com, instagram.com, linkedin.com,
// google-analytics.com, doubleclick.net and their subdomains, and hosts whose
// first label is "ads" or "analytics". A port on host is ignored.
func DefaultExcluded(host string) bool {
	host = normalizeHost(host)
	for _, d := range excludedDomains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	first, _, _ := strings.Cut(host, ".")
	return first == "ads" || first == "analytics"
}
