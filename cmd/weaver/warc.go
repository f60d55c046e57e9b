package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/warc"
)

// warcArchive is the crawl's Archive on a WARC writer (--warc DIR).
type warcArchive struct{ w *warc.Writer }

func (a warcArchive) Record(ctx context.Context, req *http.Request, resp *http.Response, body []byte, truncated bool, remoteIP string, sent time.Time) error {
	_, err := a.w.WriteExchange(ctx, warc.FromHTTP(req, resp, body, truncated, remoteIP, sent))
	return err
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
