package tooltest

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// Gunzip returns the content of the gzip file at path, every member of a
// multi-member file (a WARC file's records) one after the other; it fails
// tb when the file cannot be read.
func Gunzip(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return b
}
