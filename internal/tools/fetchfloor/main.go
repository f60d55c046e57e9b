// Command fetchfloor is the least a crawl of issue 28's page shape can
// cost: it fetches the home page of every host a weaver crawl fetched,
// from fakeweb, with 3 workers through one address (as weaver's
// --connect-to does), reads each body, tokenizes it with x/net/html and
// resolves every <a href> to its host, and stores nothing. Its CPU per
// page is what weaver's would be with the store, link selection, the
// frontier and the rest at no cost: a floor under `make profile-links`'s
// figures. --no-parse is the fetch alone; --scan reads the links with
// weaver's own byte scanner (extract.PageBytes) instead of the tokenizer,
// the floor of a weaver that scans.
//
//	scripts/profile-links.sh          # leaves /tmp/weaver-prof/crawl-all.bolt and fakeweb's address
//	bin/weaver export --db /tmp/weaver-prof/crawl-all.bolt --csv /tmp/floor
//	cut -d, -f2 /tmp/floor-nodes.csv | tail -n +2 >/tmp/floor.hosts
//	go run ./internal/tools/fetchfloor --connect-to 127.0.0.1:PORT /tmp/floor.hosts
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/html"

	"github.com/weaver-crawler/weaver/crawl/extract"
)

func main() {
	addr := flag.String("connect-to", "", "fakeweb's `ADDRESS` (host:port): every host is reached there")
	workers := flag.Int("workers", 3, "concurrent fetches")
	noParse := flag.Bool("no-parse", false, "read the bodies without tokenizing them: the fetch alone")
	scan := flag.Bool("scan", false, "read the links with weaver's byte scanner (extract.PageBytes), not the tokenizer")
	flag.Parse()
	if *addr == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: fetchfloor --connect-to HOST:PORT HOSTS_FILE")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var hosts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if h := strings.Trim(strings.TrimSpace(sc.Text()), `"`); h != "" {
			hosts = append(hosts, h)
		}
	}
	f.Close()
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, *addr)
			},
			MaxIdleConnsPerHost: 1,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	var pages, links atomic.Int64
	work := make(chan string)
	start := time.Now()
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ex extract.Extractor
			for host := range work {
				found := fetch(client, host, !*noParse, *scan, &ex)
				pages.Add(1)
				links.Add(int64(len(found)))
			}
		}()
	}
	for _, h := range hosts {
		work <- h
	}
	close(work)
	wg.Wait()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("%d pages, %d links to other hosts, %.1f s wall, CPU %.2f s (%.3f ms/page)\n",
		pages.Load(), links.Load(), time.Since(start).Seconds(), cpu.Seconds(), cpu.Seconds()/float64(pages.Load())*1000)
}

// fetch returns the hosts host's home page links to, other than itself
// (none when not parse), read by the tokenizer or, with scan, by ex.
func fetch(client *http.Client, host string, parse, scan bool, ex *extract.Extractor) []string {
	base := &url.URL{Scheme: "http", Host: host, Path: "/"}
	resp, err := client.Get(base.String())
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || !parse {
		return nil
	}
	var out []string
	if scan {
		ex.PageBytes(body, base, func(u *url.URL) bool {
			if u.Host != "" && u.Host != host {
				out = append(out, strings.ToLower(u.Hostname()))
			}
			return true
		})
		return out
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken:
			name, attr := z.TagName()
			if string(name) != "a" || !attr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					if ref, err := url.Parse(strings.TrimSpace(string(v))); err == nil {
						if u := base.ResolveReference(ref); u.Host != "" && u.Host != host {
							out = append(out, strings.ToLower(u.Hostname()))
						}
					}
				}
				if !more {
					break
				}
			}
		}
	}
}
