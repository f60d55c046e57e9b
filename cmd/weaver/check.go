package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

func init() {
	register(&command{Name: "check", Summary: "verify the store's file and weaver's invariants", Run: runCheck})
}

// errProblems is returned by check when the store has problems: exit 1.
var errProblems = errors.New("problems found")

// problemsFound is errProblems for n problems of what (a store's name):
// "x.bolt: 1 problem found".
func problemsFound(what string, n int) error {
	return problemsError{fmt.Sprintf("%s: %s found", what, count(n, "problem", ""))}
}

type problemsError struct{ msg string }

func (e problemsError) Error() string        { return e.msg }
func (e problemsError) Is(target error) bool { return target == errProblems }

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "check", "weaver check [--db FILE] [--warc DIR] [--repair [-o OUT] [--force]]", `  weaver check                     # weaver.bolt
  weaver check --db copy.bolt && weaver crawl --db copy.bolt
  weaver check --warc warcs/       # and whether the crawl's WARC files in warcs/ agree with the store
  weaver check --repair            # writes weaver.bolt.repaired; weaver.bolt is left as it is
  weaver check --repair --db damaged.bolt -o fixed.bolt && weaver crawl --db fixed.bolt`)
	db := fs.String("db", "", "the store `FILE` to check (default $WEAVER_DB_PATH, else weaver.bolt)")
	repair := fs.Bool("repair", false, "write a repaired copy of the store: every readable record, damaged ones listed and left out, indexes and counters rebuilt")
	var out string
	fs.StringVar(&out, "o", "", "with --repair, the repaired store `FILE` (default: the store's name + .repaired)")
	fs.StringVar(&out, "out", "", "same as -o `FILE`")
	force := fs.Bool("force", false, "with --repair, replace the output file if it exists")
	warcDir := fs.String("warc", "", "check that the crawl's WARC files in `DIR` agree with the store: every page's records there, nothing past the last commit, and (a crawl of each host once, without rendering) an import of them gives the store's graph weight for weight")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && !flagGiven(fs, "db"):
		*db = pos[0]
	case len(pos) > 0:
		return usageHelpf("unexpected arguments %q", pos)
	}
	*db = dbPath(e, *db)
	if *repair {
		if out == "" {
			out = *db + ".repaired"
		}
		return runRepair(ctx, e, *db, out, *force)
	}
	if flagGiven(fs, "o") || flagGiven(fs, "out") || flagGiven(fs, "force") {
		return usageHelpf("-o and --force go with --repair")
	}
	if flagGiven(fs, "warc") {
		if fi, err := os.Stat(*warcDir); err != nil || !fi.IsDir() {
			return usagef("--warc %s: not a directory", *warcDir)
		}
	}
	// bbolt trusts its pages: a damaged one can fault the process instead
	// of failing. They are read first without it; a file that is not a
	// store at all is left to kv.Open, which says why.
	if drops, err := archive.CheckPages(*db); err == nil && len(drops) > 0 {
		fmt.Fprintf(e.Stdout, "%s: %s:\n", *db, count(len(drops), "problem", ""))
		for _, d := range drops {
			fmt.Fprintf(e.Stdout, "  bbolt: %s\n", d)
		}
		fmt.Fprintf(e.Stdout, "%s\n", repairHint(*db))
		return problemsFound(*db, len(drops))
	}
	s, err := kv.Open(*db, kv.Options{ReadOnly: true})
	switch {
	case errors.Is(err, kv.ErrInUse):
		return inUseError(err, *db, snapshotFirst(*db, "check", "weaver check --db copy.bolt"))
	case errors.Is(err, kv.ErrCorrupt):
		return fmt.Errorf("%w; %s", err, repairHint(*db))
	case errors.Is(err, kv.ErrTruncated):
		return usageError{err: fmt.Errorf("%w (%s)", err, repairHint(*db))}
	case err != nil:
		return storeError(err)
	}
	defer s.Close()

	problems, counts, queued, leases, err := checkStore(s, *warcDir == "")
	if err != nil {
		return err
	}
	hint := ""
	if len(problems) > 0 {
		hint = repairHint(*db)
	}
	if *warcDir != "" {
		more, notes, err := checkWarcDir(ctx, s, *warcDir)
		if err != nil {
			return err
		}
		if len(more) > 0 && hint == "" {
			hint = fmt.Sprintf("the store is whole; its WARC files are not what it committed (weaver crawl --db %s --warc %s cuts what was written past its last commit; --repair mends stores, not WARC files)", *db, *warcDir)
		}
		problems = append(problems, more...)
		for _, n := range notes {
			fmt.Fprintf(e.Stdout, "note: %s\n", n)
		}
	}
	if len(problems) > 0 {
		fmt.Fprintf(e.Stdout, "%s: %s:\n", *db, count(len(problems), "problem", ""))
		for _, p := range problems {
			fmt.Fprintf(e.Stdout, "  %s\n", p)
		}
		fmt.Fprintf(e.Stdout, "%s\n", hint)
		return problemsFound(*db, len(problems))
	}
	fmt.Fprintf(e.Stdout, "ok: %s, %s, %d queued, %s\n", count(counts.Nodes, "node", ""), count(counts.Edges, "edge", ""), queued, count(leases, "lease", ""))
	return nil
}

// repairHint tells what to do about a damaged store.
func repairHint(db string) string {
	return fmt.Sprintf("weaver check --repair --db %s writes a copy of what can be read to %s.repaired", db, db)
}

// checkStore runs bbolt's consistency check and weaver's invariants on s
// and returns the problems found, one line each, and the store's counts.
// With warcRefs, it checks the records of the pages in the directory the
// store's crawl writes its WARC files to (checkWarcRefs).
func checkStore(s *kv.Store, warcRefs bool) (problems []string, counts graph.Counts, queued, leases uint64, err error) {
	add := func(part string, err error, prefixes ...string) {
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			for _, p := range prefixes {
				line = strings.TrimPrefix(line, p)
			}
			problems = append(problems, part+": "+line)
		}
	}
	add("bbolt", s.Check(), s.Path()+" "+kv.ErrCorrupt.Error()+": ")
	err = s.View(func(tx *kv.Tx) error {
		add("graph", graph.Check(tx), graph.ErrInconsistent.Error()+": ")
		add("frontier", frontier.Check(tx, func(id uint64) bool {
			return tx.GetRaw(kv.BucketNodes, kv.U64(id)) != nil
		}), frontier.ErrInconsistent.Error()+": ")
		counts, queued, leases = graph.GetCounts(tx), frontier.Len(tx), frontier.Leases(tx)
		return nil
	})
	if err == nil && warcRefs {
		var dir string
		err = s.View(func(tx *kv.Tx) error { dir = tx.MetaString(crawlwarc.MetaDir); return nil })
		if err == nil && dir != "" {
			problems = append(problems, checkWarcRefs(s, dir)...)
		}
	}
	return problems, counts, queued, leases, err
}

// checkWarcRefs verifies, for a store whose crawl wrote WARC files
// (--warc) into dir, that every page it holds has its records: each
// node's response record is where the node says (the file, the offset of
// the request record, the response's WARC-Record-ID after it).
func checkWarcRefs(s *kv.Store, dir string) []string {
	var refs []struct {
		host string
		ref  crawl.WarcRef
	}
	var problems []string
	err := s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			if n.Warc == "" {
				return nil
			}
			ref, ok := crawl.ParseWarcRef(n.Warc)
			if !ok {
				problems = append(problems, fmt.Sprintf("warc: %s: unreadable record reference %q", n.Host, n.Warc))
				return nil
			}
			refs = append(refs, struct {
				host string
				ref  crawl.WarcRef
			}{n.Host, ref})
			return nil
		})
	})
	if err != nil {
		return append(problems, fmt.Sprintf("warc: reading the store's record references: %v", err))
	}
	for _, r := range refs {
		if len(problems) >= 50 {
			problems = append(problems, "warc: … (stopped after 50 problems)")
			break
		}
		if err := findRecord(dir, r.ref); err != nil {
			problems = append(problems, fmt.Sprintf("warc: %s: %v", r.host, err))
		}
	}
	return problems
}

// findRecord checks that ref's exchange is in dir: the record at its
// offset, then the response with its id.
func findRecord(dir string, ref crawl.WarcRef) error {
	path := filepath.Join(dir, ref.File)
	if _, err := os.Stat(path); err != nil {
		if _, oerr := os.Stat(path + ".open"); oerr != nil {
			return fmt.Errorf("its record is in %s, which is missing", path)
		}
		path += ".open"
	}
	r, err := warc.NewReader(path, ref.Offset)
	if err != nil {
		return err
	}
	defer r.Close()
	for range 2 {
		rec, err := r.Next()
		if err != nil {
			return fmt.Errorf("%s at offset %d: %v", path, ref.Offset, err)
		}
		if strings.Trim(rec.Header("WARC-Record-ID"), "<>") == strings.Trim(ref.ID, "<>") {
			return nil
		}
	}
	return fmt.Errorf("%s at offset %d: no record %s", path, ref.Offset, ref.ID)
}

// runRepair writes a repaired copy of db to out, listing each record it
// left out as it goes, then checks the copy as weaver check does: exit 0
// when it passes, 1 when it does not.
func runRepair(ctx context.Context, e *env, db, out string, force bool) error {
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	start := time.Now()
	w := reportWriter(e, out)
	res, err := archive.Repair(ctx, db, out, archive.RepairOptions{
		Force:    force,
		DropMeta: []string{metaListenAddr}, // the address of a crawl API that is not this copy's
		Report:   func(d archive.Drop) { fmt.Fprintf(w, "dropped %s\n", d) },
	})
	if errors.Is(err, kv.ErrInUse) {
		return inUseError(err, db, snapshotFirst(db, "repair", "weaver check --repair --db copy.bolt"))
	}
	if err != nil && !errors.Is(err, archive.ErrUnsound) {
		return archiveError(err)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "repaired %s into %s: kept %s, %s, %d queued (%s returned to the queue); dropped %s, lost %s; %s in %s\n",
		db, out, count(res.Out.Nodes, "node", ""), count(res.Out.Edges, "edge", ""), res.Out.Queued, count(res.Returned, "lease", ""),
		count(res.Dropped, "record", ""), count(res.LostPages, "page", ""), humanBytes(res.Out.Bytes), time.Since(start).Round(time.Millisecond))
	if err == nil {
		fmt.Fprintf(w, "%s passes weaver check\n", out)
		return nil
	}
	// The copy holds what could be read, but something in it still breaks
	// an invariant: list it as weaver check would.
	s, oerr := kv.Open(out, kv.Options{ReadOnly: true})
	if oerr != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	defer s.Close()
	problems, _, _, _, cerr := checkStore(s, true)
	if cerr != nil {
		return cerr
	}
	fmt.Fprintf(w, "%s: %s:\n", out, count(len(problems), "problem", ""))
	for _, p := range problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
	return problemsFound(out, len(problems))
}

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}
