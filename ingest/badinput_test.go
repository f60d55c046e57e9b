package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/warc"
)

// TestRun_BadInput: a WAT cut in the middle of a record, a record whose
// JSON is broken, a record of 10 MB of links and pages that are not UTF-8
// (a WAT's JSON and a WARC's HTML) each give at most one line, and nothing
// else is lost: every other record of every file is imported, the links
// of the 10 MB record included, and the titles are UTF-8.
func TestRun_BadInput(t *testing.T) {
	dir := t.TempDir()
	// a: good pages around a broken record, the 10 MB one and a Latin-1 one.
	var big strings.Builder
	const bigLinks, bigHosts = 100_000, 2_000
	for i := range bigLinks {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"path":"A@/href","url":"https://host-%d.big.test/some/path/that/makes/it/longer?q=%d","text":"link %d"}`, i%bigHosts, i, i)
	}
	bigDoc := `{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response","WARC-Target-URI":"http://big.test/"},
 "Payload-Metadata":{"HTTP-Response-Metadata":{"Response-Message":{"Status":"200"},"Headers":{"Content-Type":"text/html"},
  "HTML-Metadata":{"Head":{"Title":"big"},"Links":[` + big.String() + `]}}}}}`
	if len(bigDoc) < 10<<20 {
		t.Fatalf("the big record has %d bytes", len(bigDoc))
	}
	latin := "{\"Envelope\":{\"WARC-Header-Metadata\":{\"WARC-Type\":\"response\",\"WARC-Target-URI\":\"http://latin.test/\"}," +
		"\"Payload-Metadata\":{\"HTTP-Response-Metadata\":{\"Response-Message\":{\"Status\":\"200\"},\"Headers\":{\"Content-Type\":\"text/html\"}," +
		"\"HTML-Metadata\":{\"Head\":{\"Title\":\"caf\xe9 cr\xe8me\"},\"Links\":[{\"path\":\"A@/href\",\"url\":\"https://out.test/\"}]}}}}}"
	writeWAT(t, filepath.Join(dir, "a.wat.gz"), watPage("http://p1.test/", "one"), `{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response"`,
		bigDoc, latin, watPage("http://p2.test/", "two"))
	// b: cut in the middle of its third record.
	writeWAT(t, filepath.Join(dir, "b.wat.gz"), watPage("http://p3.test/", "three"), watPage("http://p4.test/", "four"), watPage("http://p5.test/", "five"))
	data, err := os.ReadFile(filepath.Join(dir, "b.wat.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.wat.gz"), data[:len(data)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	// c: a WARC whose page is Latin-1; d: a good WAT after the damaged one.
	w, _, err := warc.Open(warc.Options{Dir: filepath.Join(dir, "c"), Prefix: "c", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	body := "<html><head><title>Br\xfbl\xe9e \xff\xfe</title></head><body><a href=\"https://out.test/\">x</a></body></html>"
	if _, err := w.WriteExchange(context.Background(), warc.Exchange{URL: "http://latin-warc.test/",
		Request:  []byte("GET / HTTP/1.1\r\nHost: latin-warc.test\r\n\r\n"),
		Response: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)),
		Date:     time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	writeWAT(t, filepath.Join(dir, "d.wat.gz"), watPage("http://p6.test/", "six"))

	files, err := ingest.Files([]string{dir})
	if err != nil || len(files) != 4 {
		t.Fatalf("files %v, %v", files, err)
	}
	s := storetest.MustOpen(t)
	var mu sync.Mutex
	var lines []string
	opts := ingest.Defaults()
	opts.MaxOutboundLinks = 0
	opts.Log = func(msg string) { mu.Lock(); lines = append(lines, msg); mu.Unlock() }
	st, err := ingest.Run(context.Background(), s, files, opts)
	var de *warc.DamageError
	if !errors.Is(err, ingest.ErrDamaged) || !errors.As(err, &de) || filepath.Base(de.File) != "b.wat.gz" || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("error %v, want one line: b.wat.gz damaged", err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "not a WAT record's JSON") {
		t.Errorf("log lines %q, want one: the broken record", lines)
	}
	if st.Pages != 8 || st.Other != 2 || st.FilesDamaged != 1 || st.Files != 4 || st.Links != 6+bigHosts+1 {
		t.Errorf("stats %+v: want 8 pages (2 of b before its damage), 2 other (the broken record, c's warcinfo), 1 damaged file of 4, %d links (one a page and host)", st, 6+bigHosts+1)
	}
	es, ns := graphOf(t, s)
	for _, h := range []string{"p1.test", "p2.test", "p3.test", "p4.test", "p6.test", "latin.test", "latin-warc.test"} {
		if es[[2]string{h, "out.test"}] != 1 {
			t.Errorf("the link of %s is missing", h)
		}
	}
	if _, ok := ns["p5.test"]; ok {
		t.Errorf("p5.test, in the damaged record, was imported")
	}
	big0 := 0
	for k := range es {
		if k[0] == "big.test" {
			big0++
		}
	}
	if big0 != bigHosts {
		t.Errorf("big.test links to %d hosts, want %d", big0, bigHosts)
	}
	for _, h := range []string{"latin.test", "latin-warc.test"} {
		if title := ns[h].Title; !utf8.ValidString(title) || title == "" {
			t.Errorf("%s: title %q", h, title)
		}
	}
}
