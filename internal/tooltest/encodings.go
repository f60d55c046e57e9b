package tooltest

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// EncodedPage is a page in an encoding other than UTF-8, made by
// Python's codecs (an encoder that is not the decoder under test), with
// what a browser reads in it.
type EncodedPage struct {
	Name     string `json:"name"`
	Header   string `json:"header"` // Content-Type
	Body     []byte `json:"body"`
	Title    string `json:"title"`
	Anchor   string `json:"anchor"`
	Host     string `json:"host"` // the first link's host, as IDNA writes it
	By       string `json:"by"`
	Encoding string `json:"encoding"`
}

// pythonPages encodes one page per case: its <meta charset> (when meta),
// a title, an <a> with a title attribute, text and an IDN host, then a
// second link to after.test that a misread quote would swallow.
const pythonPages = `
import json, base64, sys
cases = [
  # name, python codec, WHATWG name, label, where it is declared, title, anchor, host
  ("utf-16le-bom", "utf-16-le", "utf-16le", "", "bom", "Über uns", "straße", "bücher.test"),
  ("utf-16be-bom", "utf-16-be", "utf-16be", "", "bom", "Über uns", "straße", "bücher.test"),
  ("utf-16-header", "utf-16-le", "utf-16le", "UTF-16", "header", "Über uns", "straße", "bücher.test"),
  ("shift_jis-header", "shift_jis", "shift_jis", "Shift_JIS", "header", "日本語のページ", "カタカナ", "日本語.test"),
  ("shift_jis-meta", "shift_jis", "shift_jis", "shift_jis", "meta", "日本語のページ", "カタカナ", "日本語.test"),
  ("euc-jp-meta", "euc_jp", "euc-jp", "EUC-JP", "meta", "日本語のページ", "カタカナ", "日本語.test"),
  ("iso-2022-jp-meta", "iso2022_jp", "iso-2022-jp", "iso-2022-jp", "meta", "日本語のページ", "カタカナ", "日本語.test"),
  ("gb18030-header", "gb18030", "gb18030", "GB18030", "header", "中文网页", "链接", "中文.test"),
  ("gbk-meta", "gbk", "gbk", "gb2312", "meta", "中文网页", "链接", "中文.test"),
  ("euc-kr-meta", "euc_kr", "euc-kr", "euc-kr", "meta", "한국어 페이지", "링크", "한국.test"),
  ("windows-1251-meta", "cp1251", "windows-1251", "windows-1251", "meta", "Пример страницы", "ссылка", "пример.испытание"),
  ("koi8-r-header", "koi8_r", "koi8-r", "koi8-r", "header", "Пример страницы", "ссылка", "пример.испытание"),
  ("iso-8859-2-meta", "iso8859_2", "iso-8859-2", "iso-8859-2", "meta", "Zażółć gęślą", "jaźń", "łódź.test"),
  ("iso-8859-7-header", "iso8859_7", "iso-8859-7", "ISO-8859-7", "header", "Ελληνικά", "σύνδεσμος", "ελλάδα.test"),
  ("latin1-guess", "cp1252", "windows-1252", "", "document", "Café “menu”", "crème", "café.test"),
]
out = []
for name, codec, whatwg, label, by, title, anchor, host in cases:
    meta = '<meta charset="%s">' % label if by == "meta" else ""
    page = ('<!DOCTYPE html><html><head>%s<title>%s</title></head><body>'
            '<p><a title="%s" href="http://%s/">%s</a> <a href="http://after.test/">next</a></p></body></html>'
            % (meta, title, anchor, host, anchor))
    body = page.encode(codec)
    if by == "bom":
        body = ("\ufeff").encode(codec) + body
    header = "text/html"
    if by == "header":
        header = "text/html; charset=%s" % label
    out.append({"name": name, "header": header, "body": base64.b64encode(body).decode(),
                "title": title, "anchor": anchor, "host": host.encode("idna").decode(),
                "by": by, "encoding": whatwg})
json.dump(out, sys.stdout)
`

// EncodedPages returns the pages, one per case, made by Python.
func EncodedPages(t testing.TB) []EncodedPage {
	t.Helper()
	py := Python(t, "json")
	out, err := exec.Command(py, "-c", pythonPages).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var pages []EncodedPage
	if err := json.Unmarshal(out, &pages); err != nil {
		t.Fatal(err)
	}
	return pages
}
