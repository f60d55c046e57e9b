package warc_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/warc"
)

// node-warc writes records that end in one CRLF where WARC puts two;
// warcio reads its parseMe.warc whole, 30 records, and so does Reader,
// counting the records that ended so.
func TestReader_OneCRLFEnds(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "realweb", "warc", "node-warc-parseMe.warc")
	if _, err := os.Stat(path); err != nil {
		tooltest.Missing(t, "the shared real WARC files: %v", err)
	}
	r, err := warc.NewReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %d records: %v", n, err)
		}
		n++
	}
	if n != 30 || r.LooseEnds == 0 {
		t.Errorf("%d records, %d ending in one CRLF; want 30 records, as warcio reads the file", n, r.LooseEnds)
	}
}
