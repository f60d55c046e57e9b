package main

import (
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
)

// openWarc opens the WARC writer of --warc (see crawlwarc.Open). Records a
// kill left past the store's last commit are cut off, and said.
func openWarc(cfg *crawl.Config, store *kv.Store, logf func(level, msg string)) (*crawlwarc.Archive, error) {
	a, recovered, err := crawlwarc.Open(cfg, "weaver/"+Version, store)
	for _, r := range recovered {
		logf("WARN", "WARC: "+r.String())
	}
	if err != nil {
		return nil, usagef("warc_dir: %v", err)
	}
	return a, nil
}
