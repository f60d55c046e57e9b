package ingest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeWATAsBefore is how import decoded a WAT record before issue 43,
// the oracle decodeWAT is held to.
func decodeWATAsBefore(data []byte) (watRecord, error) {
	var w watRecord
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&w)
	return w, err
}

var watCases = []string{
	`{"Container":{"Filename":"CC-MAIN-x.warc.gz","Offset":"1234"},
"Envelope":{"Format":"WARC","WARC-Header-Length":"500",
 "WARC-Header-Metadata":{"WARC-Type":"response","WARC-Target-URI":"https://www.a.test/news/","WARC-Date":"2024-02-20T10:00:00Z"},
 "Payload-Metadata":{"Actual-Content-Type":"application/http; msgtype=response",
  "HTTP-Response-Metadata":{"Response-Message":{"Version":"HTTP/1.1","Status":"200","Reason":"OK"},
   "Headers":{"Content-Type":"text/html; charset=UTF-8","Server":"nginx","Set-Cookie":["a=1","b=2"]},
   "HTML-Metadata":{"Head":{"Title":"  A & news\n page ","Metas":[{"name":"description","content":"All the news"}],"Link":[{"path":"LINK@/href","url":"https://cdn.test/style.css"}]},
    "Links":[{"path":"A@/href","url":"/local"},{"path":"IMG@/src","url":"https://img.test/x.png"},
     {"path":"A@/href","url":"https://b.test/"},{"path":"A@/href","url":"https://B.test:443/again"}]}}}}}`,
	`{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"request","WARC-Target-URI":"https://www.a.test/news/"}}}`,
	`{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response"},"Payload-Metadata":{"HTTP-Response-Metadata":{"Response-Message":{"Status":301},"Headers":{"Location":"https://www.a.test/"}}}}}`,
	// Keys in other cases, escaped, with the Kelvin sign (K) and the long s (ſ).
	`{"envelope":{"WARC-HEADER-METADATA":{"warc-type":"resp\u006fnse"},"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Lin\u212As":[{"Path":"A@/href","URL":"x"}],"Head":{"Title":"\ud83d\ude00 \ud83d x \udc00\"\\\/\b\f\n\r\t"}}}}}}`,
	"{\"Envelope\":{\"WARC-Header-Metadata\":{\"WARC-Type\":\"r\xffe\xc3\"}, \"Payload-Metadata\":{\"HTTP-Re\u017fponse-Metadata\":{}}}}",
	// Repeated keys: structs merge, lists decode into what is there, null empties.
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Links":[{"path":"A@/href","url":"1"},{"path":"A@/href","url":"2"}],"Links":[{"url":"3"},null]}},"HTTP-Response-Metadata":{"Headers":{"a":"1"}}}}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Links":[{"path":"A@/href","url":"1"},{"path":"x","url":"2"}],"Links":[],"Links":[{"url":"3"}]}}}}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"Headers":{"a":"1"},"Headers":null,"HTML-Metadata":{"Head":{"Metas":[{"name":"d"}]}},"HTML-Metadata":null}}}}`,
	`{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":null,"WARC-Date":"x"},"WARC-Header-Metadata":null}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":null}}} trailing bytes`,
	`null`, `nullx`, ` {"Envelope":{}}`, `[]`, `"x"`, `12`, ``, `{`, `{"Envelope":{"a":[1,2,{"b":-1.5e+3}],"c":true,"d":false}}`,
	// Type mismatches and broken JSON.
	`{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":5}}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Links":{"path":"x"}}}}}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Links":["x",{"url":"y"}]}}}}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"Headers":[]}}}}`,
	`{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response",}}}`,
	`{"Envelope":{"x":01}}`, `{"Envelope":{"x":1.}}`, `{"Envelope":{"x":"\x"}}`, "{\"Envelope\":{\"x\":\"a\tb\"}}", `{"Envelope":{"x":"\u12"}}`,
	`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"Response-Message":{"Status":{"a":[1, 2 ]}}}}}}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"Envelope":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat("}", 9999),
}

// TestDecodeWAT_AsBefore: decodeWAT fills the record as encoding/json did,
// and fails where it failed.
func TestDecodeWAT_AsBefore(t *testing.T) {
	for _, c := range watCases {
		checkDecodeWAT(t, []byte(c))
	}
}

func checkDecodeWAT(t *testing.T, data []byte) {
	t.Helper()
	want, werr := decodeWATAsBefore(data)
	var got watRecord
	gerr := decodeWAT(data, &got)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%.200q: error %v, encoding/json's %v", data, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q:\n got %+v\nwant %+v", data, got, want)
	}
}

// FuzzDecodeWAT holds decodeWAT to encoding/json on any bytes.
func FuzzDecodeWAT(f *testing.F) {
	for _, c := range watCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeWAT(t, data)
	})
}
