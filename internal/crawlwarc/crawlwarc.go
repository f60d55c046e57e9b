// Package crawlwarc is a crawl's crawl.Archive on WARC files: the writer
// of weaver crawl --warc and of a weaver serve job's warc_dir.
package crawlwarc

import (
	"context"
	"crypto/sha1"
	"encoding/base32"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/warc"
)

// Archive writes a crawl's exchanges to the WARC files of one directory.
type Archive struct{ w *warc.Writer }

// Open opens the writer on cfg.WarcDir (created if missing): files named
// after the crawl (crawl_name, else the store's file name without its
// extension), each opening with a warcinfo record of the crawl's settings
// (but crawl.MachineKeys) and robots policy, rotated before
// cfg.WarcMaxSize. A file of the same name left open by a killed writer
// is cut back to its last whole record; the returned list says what was
// done, for the caller to log.
func Open(cfg *crawl.Config, software string) (*Archive, []warc.Recovered, error) {
	name := Prefix(cfg)
	settings := map[string]string{}
	for _, k := range crawl.SettingKeys {
		if slices.Contains(crawl.MachineKeys, k) {
			continue
		}
		if v, ok := cfg.Get(k); ok {
			settings[k] = v
		}
	}
	robots := "obey"
	if cfg.IgnoreRobots {
		robots = "ignore"
	}
	w, recovered, err := warc.Open(warc.Options{Dir: cfg.WarcDir, Prefix: name, MaxSize: cfg.WarcMaxSize,
		Software: software, Settings: settings, Robots: robots})
	if err != nil {
		return nil, recovered, err
	}
	return &Archive{w: w}, recovered, nil
}

// Prefix is the first part of the names of cfg's WARC files: crawl_name,
// else the store's file name without its extension.
func Prefix(cfg *crawl.Config) string {
	if cfg.CrawlName != "" {
		return cfg.CrawlName
	}
	return strings.TrimSuffix(filepath.Base(cfg.DBPath), filepath.Ext(cfg.DBPath))
}

// Record writes one exchange; a page whose payload is the one prev
// recorded becomes a revisit of prev (identical-payload-digest profile),
// and prev stays its reference.
func (a *Archive) Record(ctx context.Context, req *http.Request, resp *http.Response, body []byte, truncated bool, remoteIP string, sent time.Time, prev *crawl.WarcRef) (crawl.WarcRef, error) {
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
	w, err := a.w.WriteExchangeUnsynced(ctx, ex) // the crawl calls Sync before the page's commit
	if err != nil {
		return crawl.WarcRef{}, err
	}
	if revisit {
		return *prev, nil
	}
	return crawl.WarcRef{File: w.File, Offset: w.Offset, ID: w.ResponseID, Digest: w.PayloadDigest, Date: sent, URL: ex.URL}, nil
}

// Sync makes every exchange recorded so far durable (crawl.DeferredArchive).
func (a *Archive) Sync() error { return a.w.Sync() }

// Stats are the writer's counts so far.
func (a *Archive) Stats() warc.Stats { return a.w.Stats() }

// Close finishes the file being written.
func (a *Archive) Close() error { return a.w.Close() }
