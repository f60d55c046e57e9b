package fakeweb

// Loop3 returns the three-host loop of seed scenario 000 §11: a.test links to
// b.test, b.test to c.test and c.test back to a.test; each home page also has
// a same-host link. The seed is http://a.test/.
func Loop3() *Web {
	w := newWeb(Config{})
	for k, name := range []string{"a.test", "b.test", "c.test"} {
		w.sites = append(w.sites, site{
			name:  name,
			kind:  kindLoop,
			out:   []int32{int32((k + 1) % 3)},
			title: "Loop " + string(rune('A'+k)),
			desc:  "Host " + string(rune('A'+k)) + " of a three-host loop.",
		})
	}
	w.buildIndex()
	return w
}

// loopPage renders the small home page of a Loop3 host.
func (w *Web) loopPage(i int) ([]byte, []string) {
	s := &w.sites[i]
	next := "http://" + w.sites[s.out[0]].name + "/"
	hrefs := []string{"/about", next}
	page := "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + s.title +
		"</title>\n<meta name=\"description\" content=\"" + s.desc + "\">\n</head>\n<body>\n<h1>" + s.title +
		"</h1>\n<p><a href=\"" + hrefs[0] + "\">About</a></p>\n<p><a href=\"" + hrefs[1] +
		"\">Next</a></p>\n</body>\n</html>\n"
	return []byte(page), hrefs
}
