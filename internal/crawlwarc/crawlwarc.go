// Package crawlwarc is a crawl's crawl.Archive on WARC files: the writer
// of weaver crawl --warc and of a weaver serve job's warc_dir.
package crawlwarc

import (
	"context"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// Archive writes a crawl's exchanges to the WARC files of one directory.
type Archive struct{ w *warc.Writer }

// MetaEnd is the meta record of a crawl's store that holds where the
// records of its last commit end in its WARC files (warc.Position as
// text): each page commit that writes records rewrites it, in the same
// transaction. Before the first such commit it holds noneYet (RecordDir).
const MetaEnd = "warc.end"

// noneYet is MetaEnd of a store whose crawl writes WARC files but has
// committed no record: a file it left open holds only records of pages
// whose commit did not happen.
const noneYet = "none"

// MetaDir is the meta record that names, as an absolute path, the
// directory where the store's crawl writes its WARC files.
const MetaDir = "warc.dir"

// MetaPrefix is the meta record that holds the first part of the names
// of the store's WARC files (Prefix: crawl_name, else the store's name):
// the directory may hold other crawls' files too (weaver serve's jobs
// sharing a warc_dir).
const MetaPrefix = "warc.prefix"

// End returns the position store's last commit recorded (MetaEnd); the
// zero Position when the store's crawl writes WARC files but no commit
// wrote a record yet (RecordDir); nil when the store records neither (a
// crawl without --warc, or a store of an older weaver). It returns the
// store's error when it cannot be read.
func End(store *kv.Store) (*warc.Position, error) {
	var pos *warc.Position
	err := store.View(func(tx *kv.Tx) error {
		v := tx.MetaString(MetaEnd)
		if p, ok := warc.ParsePosition(v); ok {
			pos = &p
		} else if v == noneYet {
			pos = &warc.Position{}
		}
		return nil
	})
	return pos, err
}

// Open opens the writer on cfg.WarcDir (created if missing): files named
// after the crawl (crawl_name, else the store's file name without its
// extension), each opening with a warcinfo record of the crawl's settings
// (but crawl.MachineKeys) and robots policy, rotated before
// cfg.WarcMaxSize. A file of the same name left open by a killed writer
// is cut at the end of store's last commit (End; a file started after it
// is removed; every file, when no commit wrote a record), or, for a store
// that records no position (an older weaver's), after its last whole
// record; the returned list says what was done, for the caller to log.
func Open(cfg *crawl.Config, software string, store *kv.Store) (*Archive, []warc.Recovered, error) {
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
	// Where the files are cut comes from the store: unread, nothing is cut.
	end, err := End(store)
	if err != nil {
		return nil, nil, fmt.Errorf("warc: reading where the last commit's records end: %w", err)
	}
	w, recovered, err := warc.Open(warc.Options{Dir: cfg.WarcDir, Prefix: name, MaxSize: cfg.WarcMaxSize,
		Software: software, Settings: settings, Robots: robots, Committed: end})
	if err != nil {
		return nil, recovered, err
	}
	return &Archive{w: w}, recovered, nil
}

// RecordDir records in tx where cfg's crawl writes its WARC files
// (MetaDir: cfg.WarcDir, absolute) and the first part of their names
// (MetaPrefix), for weaver check --warc and the job API. Called before
// the crawl commits a page, it also records, in a store that holds no
// position yet, that no commit wrote a record (noneYet): the records of
// a first commit cut short by a kill are then removed by the next Open,
// not kept as if committed.
func RecordDir(tx *kv.Tx, cfg *crawl.Config) error {
	if err := tx.SetMetaString(MetaDir, cfg.WarcDir); err != nil {
		return err
	}
	if tx.MetaString(MetaEnd) == "" {
		if err := tx.SetMetaString(MetaEnd, noneYet); err != nil {
			return err
		}
	}
	return tx.SetMetaString(MetaPrefix, Prefix(cfg))
}

// Prefix is the first part of the names of cfg's WARC files: crawl_name,
// else the store's file name without its extension.
func Prefix(cfg *crawl.Config) string {
	if cfg.CrawlName != "" {
		return cfg.CrawlName
	}
	return strings.TrimSuffix(filepath.Base(cfg.DBPath), filepath.Ext(cfg.DBPath))
}

// Record builds one exchange's records, for the page's commit to write
// (Write); a page whose payload is the one prev recorded becomes a
// revisit of prev (identical-payload-digest profile), and prev stays its
// reference.
func (a *Archive) Record(ctx context.Context, req *http.Request, resp *http.Response, body []byte, truncated bool, remoteIP string, sent time.Time, prev *crawl.WarcRef) (*crawl.Capture, error) {
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
	b, err := a.w.Build(ctx, ex)
	if err != nil {
		return nil, err
	}
	if revisit {
		return &crawl.Capture{Ref: *prev, Revisit: true, Records: b.Data}, nil
	}
	return &crawl.Capture{Ref: crawl.WarcRef{ID: b.ResponseID, Digest: b.PayloadDigest, Date: sent, URL: ex.URL}, Records: b.Data}, nil
}

// Write stages a page's captures in tx, and records in tx where they end
// (MetaEnd): the writer, enlisted in tx, writes and fsyncs them before tx
// commits — one fsync for a whole group of pages — and cuts them if it
// does not.
func (a *Archive) Write(tx *kv.Tx, cs []*crawl.Capture) error {
	tx.Enlist(a.w) // first: what is staged is forgotten if staging fails
	for _, c := range cs {
		at, err := a.w.Stage(&warc.Built{Data: c.Records})
		if err != nil {
			return err
		}
		if !c.Revisit {
			c.Ref.File, c.Ref.Offset = at.File, at.Offset
		}
	}
	end, ok := a.w.StagedEnd()
	if !ok {
		return nil
	}
	return tx.SetMetaString(MetaEnd, end.String())
}

// Stats are the writer's counts so far.
func (a *Archive) Stats() warc.Stats { return a.w.Stats() }

// Close finishes the file being written.
func (a *Archive) Close() error { return a.w.Close() }
