package extract_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/weaver-crawler/weaver/crawl/extract"
)

// checkAttrs checks that, for every start tag of doc, extract reads the
// same attributes as the tokenizer's TagAttr returns.
func checkAttrs(t *testing.T, doc []byte) (inPlace int) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return inPlace
		case html.StartTagToken, html.SelfClosingTagToken:
			got, ok := extract.Attrs(z)
			if !ok {
				continue // read through TagAttr itself
			}
			inPlace++
			var want [][2]string
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				if k != nil {
					want = append(want, [2]string{string(k), string(v)})
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("tag %q:\ngot  %q\nwant %q", z.Raw(), got, want)
			}
		}
	}
}

func TestAttrs_MatchTokenizer(t *testing.T) {
	tags := []string{
		`<a>`, `<a >`, `<a/>`, `<a href>`, `<a href=>`, `<a href=x>`, `<a href = x >`,
		`<a href="x">`, `<a href='x'>`, `<a href="x"class=y>`, `<a href=x/>`, `<a href="x"/>`,
		`<a href=x class="y" id='z' data-q>`, `<a HREF=X Href=Y>`, `<a =x>`, `<a ==x>`, `<a x==y>`,
		`<a / href=x>`, `<a/href=x>`, `<a href/=x>`, `<a href="a>b">`, `<a href='a"b'>`,
		`<a href=a"b'c>`, "<a\thref=x\nclass=y\f>", `<a href=">`, `<a b c d=e f>`,
		`<a href="x" href="y">`, `<a 'x'=y>`, `<a x=y'z'>`, `<a x=>y>`, `<a x= >`, `<a x="">`,
		`<a<b>`, `<a/ />`, `<a x/ y>`, `<a x y=z/>`, `<meta name=robots content="noindex, nofollow">`,
		"<a href=\"\xff\xfe\">", `<a hre\f=x>`, `<a x="` + strings.Repeat("y", 5000) + `">`,
	}
	inPlace := 0
	for _, tag := range tags {
		inPlace += checkAttrs(t, []byte(tag+"text"))
	}
	if inPlace < len(tags)-2 {
		t.Errorf("only %d of %d tags read in place", inPlace, len(tags))
	}
}
