package render

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// mountIDs are the ids of the elements single-page frameworks mount into:
// Vue and many others (app), React (root), Next.js (__next).
var mountIDs = []string{"app", "root", "__next"}

// LooksLikeShell reports whether the raw HTML of a page looks like a
// JavaScript shell whose links only a browser would see: it has no <a href>
// or <area href> link at all (with a non-blank href) and a script (inline
// with some code, or with a src), or it has an empty mount element (an
// element with the id app, root or __next and nothing but white space and
// comments inside). A page with links and a script is an ordinary page.
//
// As in a browser with scripting on, the content of <noscript>, <script>,
// <style>, <textarea> and <template> holds no link.
func LooksLikeShell(page []byte) bool {
	z := html.NewTokenizer(bytes.NewReader(page))
	z.SetMaxBuf(4 << 20)
	links, script := false, false
	template := 0
	mount := "" // the tag name of an open mount element
	inMount := false
	for {
		tt := z.Next()
		if inMount {
			switch tt {
			case html.CommentToken:
				continue
			case html.TextToken:
				if len(bytes.TrimSpace(z.Text())) == 0 {
					continue
				}
			case html.EndTagToken:
				name, _ := z.TagName()
				if string(name) == mount {
					return true
				}
			}
			inMount = false
		}
		switch tt {
		case html.ErrorToken:
			return !links && script
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if template > 0 {
				if tag == "template" {
					template++
				}
				continue
			}
			var href, src, id string
			var hasHref bool
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "href":
					href, hasHref = string(v), true
				case "src":
					src = string(v)
				case "id":
					id = string(v)
				}
			}
			switch tag {
			case "template":
				template++
				continue
			case "a", "area":
				if hasHref && strings.TrimSpace(href) != "" {
					links = true
				}
			case "script":
				if strings.TrimSpace(src) != "" {
					script = true
				} else if tt == html.StartTagToken && z.Next() == html.TextToken && len(bytes.TrimSpace(z.Text())) > 0 {
					script = true
				}
			}
			if tt == html.StartTagToken && isMountID(id) && !voidElement(tag) {
				mount, inMount = tag, true
			}
		case html.EndTagToken:
			if template > 0 {
				if name, _ := z.TagName(); string(name) == "template" {
					template--
				}
			}
		}
	}
}

func isMountID(id string) bool {
	id = strings.TrimSpace(id)
	for _, m := range mountIDs {
		if id == m {
			return true
		}
	}
	return false
}

func voidElement(tag string) bool {
	switch tag {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "script", "style", "textarea", "title", "noscript":
		return true
	}
	return false
}
