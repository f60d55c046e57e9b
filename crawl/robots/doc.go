// Package robots decides, from a host's /robots.txt fetch, whether weaver
// may fetch a URL of that host and how long it should wait between requests.
//
// It implements the policy of RFC 9309 on top of
// github.com/jimsmart/grobotstxt, a port of Google's reference parser and
// matcher:
//
//   - the outcome of the fetch picks the policy (§2.3.1): a 2xx body is
//     parsed, a 4xx means "unavailable" and allows everything, a 5xx or an
//     unreachable server means "complete disallow";
//   - only the first MaxBodyBytes (500 KiB) of a body are parsed (§2.5);
//   - the group that applies is the one whose user-agent line names the
//     crawler's product token, compared case-insensitively, else the "*"
//     group (§2.2.1); the longest matching rule wins and Allow wins a tie
//     (§2.2.2);
//   - Crawl-delay, which RFC 9309 leaves to the crawler, is read from the
//     same group and capped at MaxCrawlDelay.
//
// A Rules value is immutable and safe for concurrent use. It keeps the
// (capped) body text rather than a parsed form: MarshalBinary gives the
// bytes to cache, and every Allowed or CrawlDelay call parses the body
// again, which costs some microseconds for an ordinary file (10 to 20 for
// Google's own) and is done about twice per host.
//
// Where grobotstxt v1.0.3 departs from Google's reference, Rules follows the
// reference: a user-agent line is matched on its leading run of
// [A-Za-z_-] characters ("User-agent: AB42bot" names the crawler "AB"), as
// RFC 9309's product-token grammar and Google's parser do; grobotstxt
// itself accepts the wider RFC 7231 token alphabet.
package robots
