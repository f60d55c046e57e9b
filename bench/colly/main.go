// Command colly is the crawl weaver is compared with: a few lines of
// github.com/gocolly/colly/v2 written the way a user would write them to get
// a host graph, pointed at fakeweb through the same --connect-to style
// dialer weaver uses. benchrun runs it as a child process, alternating with
// weaver, and reads the JSON line it prints.
//
// Mode "crawl" (the default) crawls from a seed: colly.Async, one LimitRule
// with Parallelism = --workers for every domain, the default in-memory
// storage, robots.txt ignored unless --robots. Every page's links go through
// weaver's selection rules (seed 000 §5.3) in an OnHTML callback: resolved
// with AbsoluteURL, http(s) only, lower-cased host without its default port,
// other hosts only, excluded hosts dropped, one per host, the first
// --max-outbound; each new host's home page is visited once (colly's own
// visited check) and the edges are kept in a map. It prints
//
//	{"pages":N,"fetches":N,"errors":N,"hosts":N,"edges":N,"seconds":S}
//
// Mode "queue" puts --queue-hosts home-page URLs in colly's in-memory
// queue and reports the Go heap; benchrun takes the process's peak RSS.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

func main() {
	err := run(os.Args[1:])
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("colly", flag.ContinueOnError)
	mode := fs.String("mode", "crawl", "`MODE`: crawl or queue")
	connect := fs.String("connect", "", "send every connection to `ADDR` (fakeweb's host:port)")
	workers := fs.Int("workers", 3, "LimitRule Parallelism `N`")
	robots := fs.Bool("robots", false, "fetch and obey robots.txt (colly's IgnoreRobotsTxt = false)")
	maxOut := fs.Int("max-outbound", 10, "distinct other hosts `N` kept per page")
	queueHosts := fs.Int("queue-hosts", 1_000_000, "URLs `N` to put in the in-memory queue (mode queue)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: colly [flags] [SEED_URL]\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), `
Examples:
  colly --connect 127.0.0.1:8080 --workers 3 http://www.ash-966.com/
  colly --connect 127.0.0.1:8080 --workers 3 --robots http://www.ash-966.com/
  colly --mode queue --queue-hosts 1000000
`)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *mode {
	case "crawl":
		if fs.NArg() != 1 || *connect == "" {
			fs.Usage()
			return errors.New("crawl wants --connect ADDR and one SEED_URL")
		}
		return crawl(fs.Arg(0), *connect, *workers, *robots, *maxOut)
	case "queue":
		return fillQueue(*queueHosts, *workers)
	}
	return fmt.Errorf("unknown --mode %q", *mode)
}

// result is the JSON line crawl prints.
type result struct {
	Pages   int64   `json:"pages"`   // 2xx answers parsed
	Fetches int64   `json:"fetches"` // home-page requests answered, any status
	Errors  int64   `json:"errors"`  // requests that failed or were not 2xx
	Hosts   int     `json:"hosts"`   // distinct hosts whose home page was fetched
	Edges   int     `json:"edges"`   // distinct (from, to) host pairs recorded
	Seconds float64 `json:"seconds"` // from the first Visit to Wait's return
}

func crawl(seed, connect string, workers int, robots bool, maxOut int) error {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, connect)
	}

	c := colly.NewCollector(colly.Async(true))
	c.WithTransport(tr)
	c.IgnoreRobotsTxt = !robots
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: workers}); err != nil {
		return err
	}

	var (
		mu      sync.Mutex // guards the counters and maps below
		res     result
		edges   = map[[2]string]struct{}{}
		fetched = map[string]struct{}{}
	)
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		res.Pages++
		res.Fetches++
		fetched[r.Request.URL.Host] = struct{}{}
		mu.Unlock()
	})
	c.OnError(func(r *colly.Response, _ error) {
		mu.Lock()
		res.Errors++
		if r.StatusCode != 0 {
			res.Fetches++
			fetched[r.Request.URL.Host] = struct{}{}
		}
		mu.Unlock()
	})
	c.OnHTML("html", func(e *colly.HTMLElement) {
		from := e.Request.URL
		source := hostOf(from)
		seen := map[string]bool{}
		var picked []*url.URL
		e.ForEachWithBreak("a[href]", func(_ int, a *colly.HTMLElement) bool {
			abs := a.Request.AbsoluteURL(a.Attr("href"))
			if abs == "" {
				return true
			}
			u, err := url.Parse(abs)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return true
			}
			host := hostOf(u)
			if host == source || seen[host] {
				return true
			}
			seen[host] = true
			if excluded(u.Hostname()) {
				return true
			}
			u.Host = host
			picked = append(picked, u)
			return maxOut <= 0 || len(picked) < maxOut
		})
		mu.Lock()
		for _, u := range picked {
			edges[[2]string{source, u.Host}] = struct{}{}
		}
		mu.Unlock()
		for _, u := range picked {
			// colly's visited check drops a home page seen before.
			_ = e.Request.Visit(u.Scheme + "://" + u.Host + "/")
		}
	})

	start := time.Now()
	if err := c.Visit(seed); err != nil {
		return err
	}
	c.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Hosts, res.Edges = len(fetched), len(edges)
	return json.NewEncoder(os.Stdout).Encode(res)
}

// hostOf is the URL's host lower-cased, without the scheme's default port.
func hostOf(u *url.URL) string {
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	return host
}

// excludedSites are left out with their subdomains (seed 000 §5.3).
var excludedSites = []string{"facebook.com", "twitter.com", "x.com", "instagram.com", "linkedin.com", "google-analytics.com", "doubleclick.net"}

// excluded applies seed 000 §5.3 and x.com to a host name without port: the sites
// and their subdomains, and hosts whose first label is ads or analytics.
func excluded(name string) bool {
	name = strings.ToLower(name)
	for _, s := range excludedSites {
		if name == s || strings.HasSuffix(name, "."+s) {
			return true
		}
	}
	return strings.HasPrefix(name, "ads.") || strings.HasPrefix(name, "analytics.")
}

// fillQueue adds n home-page URLs to colly's in-memory queue, as a user
// would queue a frontier, and prints the Go heap in use afterwards.
func fillQueue(n, workers int) error {
	c := colly.NewCollector()
	q, err := queue.New(workers, &queue.InMemoryQueueStorage{MaxSize: n + 1})
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := q.AddURL(fmt.Sprintf("http://host%07d.example/", i)); err != nil {
			return err
		}
	}
	size, err := q.Size()
	if err != nil {
		return err
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(c) // the collector that q.Run would drive
	return json.NewEncoder(os.Stdout).Encode(struct {
		Queued  int     `json:"queued"`
		HeapMiB float64 `json:"heap_mib"`
	}{size, float64(ms.HeapInuse) / (1 << 20)})
}
