package main

import (
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
)

// openWarc opens the WARC writer of --warc (see crawlwarc.Open). A record
// torn by a kill is cut off, and said.
func openWarc(cfg *crawl.Config, logf func(level, msg string)) (*crawlwarc.Archive, error) {
	a, recovered, err := crawlwarc.Open(cfg, "weaver/"+Version)
	for _, r := range recovered {
		logf("WARN", "WARC: "+r.String())
	}
	if err != nil {
		return nil, usagef("warc_dir: %v", err)
	}
	return a, nil
}
