package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/warc"
)

// TestCommittedParts_NothingCommitted: a store whose commits wrote no
// record (the zero position: its crawl was stopped before its first page
// commit) refers to none of its crawl's files, open or finished; each is
// named as a problem the next crawl mends, and none is imported.
func TestCommittedParts_NothingCommitted(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"c-20261202000000-00000.warc.gz", "c-20261202000001-00001.warc.gz.open"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("records"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := crawlFiles(dir, "c")
	if err != nil || len(files) != 2 {
		t.Fatalf("crawlFiles: %v, %v", files, err)
	}
	inputs, tmp, problems := committedParts(files, &warc.Position{})
	defer os.RemoveAll(tmp)
	if len(inputs) != 0 {
		t.Errorf("inputs %v, want none", inputs)
	}
	if len(problems) != 2 {
		t.Fatalf("problems %q, want one a file", problems)
	}
	for i, p := range problems {
		if !strings.Contains(p, files[i].path) || !strings.Contains(p, "the store's commits wrote no record") {
			t.Errorf("problem %q, want it to name %s and say no commit wrote a record", p, files[i].path)
		}
	}
}
