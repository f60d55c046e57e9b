package main

import (
	"context"
	"crypto/sha1"
	"encoding/base32"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/warc"
)

// warcArchive is the crawl's Archive on a WARC writer (--warc DIR).
type warcArchive struct{ w *warc.Writer }

// Record writes one exchange; a page whose payload is the one prev
// recorded becomes a revisit of prev (identical-payload-digest profile),
// and prev stays its reference.
func (a warcArchive) Record(ctx context.Context, req *http.Request, resp *http.Response, body []byte, truncated bool, remoteIP string, sent time.Time, prev *crawl.WarcRef) (crawl.WarcRef, error) {
	ex := warc.FromHTTP(req, resp, body, truncated, remoteIP, sent)
	revisit := false
	if prev != nil && resp.StatusCode == http.StatusNotModified && prev.URL == ex.URL {
		// A 304 to a conditional request: the page recorded before.
		ex.Revisit = &warc.Original{URL: prev.URL, Date: prev.Date, RecordID: prev.ID, NotModified: true}
		revisit = true
	} else if prev != nil && prev.URL == ex.URL && !truncated && resp.StatusCode < 300 {
		sum := sha1.Sum(body)
		if prev.Digest == "sha1:"+base32.StdEncoding.EncodeToString(sum[:]) {
			ex.Revisit = &warc.Original{URL: prev.URL, Date: prev.Date, RecordID: prev.ID}
			revisit = true
		}
	}
	w, err := a.w.WriteExchange(ctx, ex)
	if err != nil {
		return crawl.WarcRef{}, err
	}
	if revisit {
		return *prev, nil
	}
	return crawl.WarcRef{File: w.File, Offset: w.Offset, ID: w.ResponseID, Digest: w.PayloadDigest, Date: sent, URL: ex.URL}, nil
}

// openWarc opens the WARC writer of --warc: files named after the crawl
// (crawl_name, else the store's name), each opening with a warcinfo
// record of the crawl's settings and robots policy. A record torn by a
// kill is cut off, and said.
func openWarc(cfg *crawl.Config, logf func(level, msg string)) (*warc.Writer, error) {
	name := cfg.CrawlName
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(cfg.DBPath), filepath.Ext(cfg.DBPath))
	}
	settings := map[string]string{}
	for _, k := range crawl.SettingKeys {
		if v, ok := cfg.Get(k); ok {
			settings[k] = v
		}
	}
	robots := "obey"
	if cfg.IgnoreRobots {
		robots = "ignore"
	}
	w, recovered, err := warc.Open(warc.Options{Dir: cfg.WarcDir, Prefix: name, MaxSize: cfg.WarcMaxSize,
		Software: "weaver/" + Version, Settings: settings, Robots: robots})
	if err != nil {
		return nil, usagef("warc_dir: %v", err)
	}
	for _, r := range recovered {
		logf("WARN", "WARC: "+r.String())
	}
	return w, nil
}
