// Package fakeweb is a fake internet for testing and benchmarking the crawler:
// one HTTP handler that serves thousands of virtual hosts, chosen by the Host
// header, with home pages, robots.txt files and misbehaviours all derived from
// a seed, and the ground truth to check a crawl against.
//
// A crawler reaches it the way a user would point weaver at a staging
// network: with a curl-style --connect-to rule ("::127.0.0.1:PORT", see
// Server.ConnectTo) or with the server as HTTP proxy, since absolute-form
// request URIs are routed by their host too.
//
// # The generated web
//
// New(Config{Hosts: n, Seed: s}) makes n hosts named like real ones:
// www.alder-17.com, blog.birch-203.co.uk, ash-5.org. Registrable domains are
// <word>-<number>.<suffix> over single- and multi-label public suffixes (com,
// org, co.uk, ac.uk, com.au, co.jp, ...), each carrying one to three hosts
// (the apex, www, blog, shop, news, ...), never more, so a crawler's
// three-subdomains-per-domain limit never decides what it sees. Host 0,
// always www.<word>-<number>.com, is the seed.
//
// Links follow preferential attachment: a spanning tree gives every host an
// in-link from an earlier host among that host's first few links, so all hosts
// are reachable from the seed through the links a crawler keeps; the rest of
// each page's links go to hosts drawn in proportion to their in-degree, which
// gives the power law of real host graphs. Home pages are about 30 KB of
// ordinary markup (head, nav, article, blogroll, footer) and exercise link
// handling: relative and protocol-relative links, same-host links written
// absolutely, upper-case schemes and hosts, explicit default ports, entities
// in URLs, padded hrefs, <base href> (sometimes to another host), <area>,
// links in comments and scripts, other schemes, malformed URLs, and links to
// hosts the crawler excludes (facebook.com, ads.<domain>, ...). Titles and
// descriptions carry entities, quotes and non-ASCII text.
//
// # Topics: a web with the structure of the real one
//
// With Config.Topics, New makes a topical web instead: sites of one to
// three hosts under one registrable domain, grouped into that many
// topics, each named after a theme (trees, birds, rivers, ...), whose
// pages link mostly inside their topic and most often to its first hosts,
// its hubs; a tenth of the links cross to other topics. The pages are
// the generated web's. Topic tells a host's topic: the ground truth of
// the communities a map of its crawl should show (make demo crawls one).
//
// # Ground truth
//
// Hosts, Seed, Links, Title and Description describe the web;
// ExpectedEdges computes the host graph a correct crawl records, with only
// net/url and the selection rules written out in its documentation.
//
// # Sites: several pages per host
//
// NewSites(SitesConfig{}) makes a smaller web for issue 20's page-level
// crawl: hosts of several pages linked from the home page and from each
// other, links with rel nofollow, ugc and sponsored, <meta name="robots">
// nofollow and noindex, X-Robots-Tag headers (for weaver and for other
// bots), robots.txt path rules (Disallow: /private/), home pages that
// redirect to another host, and mirror hosts that serve the same home page
// bytes. ExpectedSites computes from the model the graph a correct crawl
// records, nodes (status, pages fetched, title, canonical, robots
// directives, mirror) and edges (weight, nofollow, redirect), for a page
// count, an outbound limit and a scope; its documentation lists the rules.
// The generated web of New is unchanged.
//
// # Faults and replays
//
// Config.Faults gives chosen hosts a Fault: slow or endless bodies, huge
// pages, a gzip bomb, redirect loops and chains, 429s and 5xx bursts, a reset
// connection, binary or broken markup, link farms, crawler traps, hostile
// robots.txt files and links to private addresses. FromEdges replays a real
// host graph, such as the 1996 UK web; Loop3 is the three-host loop of seed
// scenario 000.
//
// # JavaScript shells
//
// Config.Shells and Config.ShellEvery make hosts single-page apps: the home
// page is an empty <div id="app"> and a script that adds the links with DOM
// calls after a delay, so only a crawler that renders pages sees them; other
// Shell values make the script hostile to the browser (an endless loop,
// dialogs, a navigation away, popups, a DOM that grows without end, requests
// to private addresses, a script robots.txt disallows). Without them the web
// has no shell.
package fakeweb
