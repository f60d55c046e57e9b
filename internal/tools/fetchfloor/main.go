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
//	go run ./internal/tools/fetchfloor --list-crawled /tmp/weaver-prof/crawl-all.bolt >/tmp/floor.hosts
//	go build -o /tmp/fetchfloor ./internal/tools/fetchfloor
//	/usr/bin/time /tmp/fetchfloor --connect-to 127.0.0.1:PORT /tmp/floor.hosts
//
// --list-crawled prints the hosts a store's crawl fetched (of a crawl cut
// short by --max-pages, not the hosts it only found), one a line, so that
// reading the store is no part of the floor's own run.
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
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

func main() {
	addr := flag.String("connect-to", "", "fakeweb's `ADDRESS` (host:port): every host is reached there")
	workers := flag.Int("workers", 3, "concurrent fetches")
	noParse := flag.Bool("no-parse", false, "read the bodies without tokenizing them: the fetch alone")
	scan := flag.Bool("scan", false, "read the links with weaver's byte scanner (extract.PageBytes), not the tokenizer")
	list := flag.String("list-crawled", "", "print the hosts the crawl of the store at `FILE` fetched, and exit")
	flag.Parse()
	if *list != "" {
		if err := listCrawled(*list); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *addr == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: fetchfloor [--scan | --no-parse] --connect-to HOST:PORT HOSTS_FILE; fetchfloor --list-crawled STORE")
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

// listCrawled prints the hosts of the store at path that a crawl fetched.
func listCrawled(path string) error {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	return s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			if n.CrawlCount > 0 {
				fmt.Fprintln(w, n.Host)
			}
			return nil
		})
	})
}
