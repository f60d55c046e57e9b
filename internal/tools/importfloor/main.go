// Command importfloor is the least an import of WARC files can cost: it
// gunzips every record (one gzip member at a time, with the decompressor
// weaver's reader uses) and runs x/net/html's tokenizer to the end of the
// body of every response record, on one goroutine, reading nothing else
// and storing nothing. Its CPU is the floor under weaver import's on the
// same files (issue 43: import within 1.2x of it); it prints the records,
// the pages tokenized and its own CPU.
//
//	WEAVER_BENCH_DIR=/tmp/wb WEAVER_BENCH_PAGES=10000 go test ./ingest -run '^$' -bench 'Import$/none' -benchtime 1x
//	go run ./internal/tools/importfloor /tmp/wb/warc-10000/*.warc.gz
//	/usr/bin/time -v bin/weaver import --db /tmp/f.bolt /tmp/wb/warc-10000
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/html"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: importfloor FILE.warc.gz ...")
		os.Exit(2)
	}
	var records, pages int64
	for _, path := range os.Args[1:] {
		r, p, err := floor(path)
		records, pages = records+r, pages+p
		if err != nil {
			fmt.Fprintf(os.Stderr, "importfloor: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("%d records, %d pages tokenized, CPU %.2f s (%.1f µs a page)\n", records, pages, cpu.Seconds(), float64(cpu.Microseconds())/float64(max(pages, 1)))
}

// floor gunzips path's records one member at a time and tokenizes the body
// of each response record.
func floor(path string) (records, pages int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	zr, err := gzip.NewReader(br)
	if err != nil {
		return 0, 0, err
	}
	var rec bytes.Buffer
	for {
		zr.Multistream(false)
		rec.Reset()
		if _, err := rec.ReadFrom(zr); err != nil {
			return records, pages, err
		}
		records++
		data := rec.Bytes()
		if bytes.Contains(data[:min(len(data), 512)], []byte("WARC-Type: response\r\n")) {
			if _, msg, ok := bytes.Cut(data, []byte("\r\n\r\n")); ok {
				if _, body, ok := bytes.Cut(msg, []byte("\r\n\r\n")); ok {
					z := html.NewTokenizer(bytes.NewReader(body))
					for z.Next() != html.ErrorToken {
					}
					pages++
				}
			}
		}
		if err := zr.Reset(br); errors.Is(err, io.EOF) {
			return records, pages, nil
		} else if err != nil {
			return records, pages, err
		}
	}
}
