package fakeweb

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// page renders one home page. Decorations (which links, how each is spelled)
// come from lr; filler text comes from fr and is skipped when only the links
// are wanted, which leaves lr's sequence, and so the links, unchanged.
type page struct {
	w      *Web
	i      int
	s      *site
	host   string
	reg    string
	write  bool // false: collect hrefs only
	broken bool // InvalidBytes: sprinkle invalid bytes
	buf    []byte
	hrefs  []string
	lr     *rng
	fr     *rng
}

func (w *Web) newPage(i int, write bool) *page {
	s := &w.sites[i]
	p := &page{
		w:      w,
		i:      i,
		s:      s,
		host:   s.name,
		reg:    registrable(s.name),
		write:  write,
		broken: s.fault&InvalidBytes != 0,
		lr:     newRNG(w.seed, streamLinks, i),
		fr:     newRNG(w.seed, streamFill, i),
	}
	if write {
		p.buf = make([]byte, 0, w.cfg.PageBytes+w.cfg.PageBytes/4)
	}
	return p
}

func (p *page) raw(parts ...string) {
	if !p.write {
		return
	}
	for _, s := range parts {
		p.buf = append(p.buf, s...)
	}
}

// link writes an <a> element, varying how it is spelled, and records href.
func (p *page) link(href, text string) {
	p.hrefs = append(p.hrefs, href)
	text = escapeText(p.lr, text, false)
	if p.broken && p.lr.chance(0.2) {
		text += "\xff"
	}
	switch v := p.lr.intn(100); {
	case v < 78:
		p.raw(`<a href="`, href, `">`, text, `</a>`)
	case v < 84:
		p.raw(`<a class="`, pick(p.lr, []string{"ext", "more", "btn btn-link"}), `" href="`, href, `">`, text, `</a>`)
	case v < 88:
		p.raw(`<a rel="nofollow noopener" href="`, href, `" target="_blank">`, text, `</a>`)
	case v < 92 && !strings.Contains(href, "'"):
		p.raw(`<a href='`, href, `'>`, text, `</a>`)
	case v < 96:
		p.raw(`<A HREF="`, href, `">`, text, `</A>`)
	case unquotable(href):
		p.raw(`<a href=`, href, `>`, text, `</a>`)
	default:
		p.raw(`<a title="`, escapeText(p.lr, text, true), `" href="`, href, `">`, text, `</a>`)
	}
}

// unquotable reports whether href can be written as an unquoted attribute
// value without any tokenizer ambiguity.
func unquotable(href string) bool {
	if href == "" || strings.HasSuffix(href, "/") {
		return false
	}
	for _, c := range href {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '/' || c == '.' || c == '_' || c == '-' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

var fillerWords = []string{
	"the", "a", "of", "and", "to", "in", "garden", "river", "market", "winter",
	"morning", "letters", "harbour", "quiet", "street", "city", "notes", "old",
	"new", "bridge", "train", "window", "coffee", "café", "naïve", "façade",
	"walk", "map", "story", "weekend", "bread", "rain", "light", "stone", "north",
	"south", "island", "paper", "ink", "workshop", "season", "field", "hill",
	"village", "library", "archive", "photograph", "recipe", "kitchen", "table",
	"Zürich", "Kraków", "São Paulo", "fish & chips", "“quoted”", "it's", "<none>",
	"crème", "brûlée", "smörgåsbord", "Straße", "東京", "€5", "£3", "—", "…",
}

// appendSentence appends an escaped filler sentence to dst.
func (p *page) appendSentence(dst []byte) []byte {
	n := 6 + p.fr.intn(14)
	for k := 0; k < n; k++ {
		v := p.fr.next()
		word := int((v >> 32) * uint64(len(fillerWords)) >> 32)
		variant := int(v & (fillerVariants - 1))
		if k == 0 {
			dst = append(dst, fillerCapital[word][variant]...)
			continue
		}
		dst = append(dst, ' ')
		dst = append(dst, fillerEscaped[word][variant]...)
	}
	dst = append(dst, pick(p.fr, []string{".", ".", ".", "!", "?", ";"})...)
	if p.broken && p.fr.chance(0.3) {
		dst = append(dst, pick(p.fr, []string{" \xc3\x28", " \xed\xa0\x80", " \xf8\x88\x80\x80\x80", " \xff\xfe", " \xe2\x82"})...)
	}
	return dst
}

// fillerVariants is how many escaped spellings each filler word has; a power
// of two.
const fillerVariants = 8

// fillerEscaped and fillerCapital hold escaped spellings of each filler word,
// as is and capitalised, so filler costs one random draw per word.
var fillerEscaped, fillerCapital = func() ([][]string, [][]string) {
	r := newRNG(0, streamFill, -1)
	plain := make([][]string, len(fillerWords))
	capital := make([][]string, len(fillerWords))
	for k, w := range fillerWords {
		for range fillerVariants {
			plain[k] = append(plain[k], escapeText(r, w, false))
			capital[k] = append(capital[k], escapeText(r, upperFirst(w), false))
		}
	}
	return plain, capital
}()

// filler writes n sentences.
func (p *page) filler(n int) {
	if !p.write {
		return
	}
	for k := 0; k < n; k++ {
		p.buf = p.appendSentence(p.buf)
		p.buf = append(p.buf, ' ')
	}
}

// inWebHref spells a link to host t in one of the ways real pages do; every
// spelling resolves to host t.
func (p *page) inWebHref(t string) string {
	path := pick(p.lr, []string{"post/" + strconv.Itoa(1+p.lr.intn(400)), "tag/" + pick(p.lr, words), "archive/" + strconv.Itoa(1996+p.lr.intn(29)) + "/", "index.html", "about"})
	switch v := p.lr.intn(100); {
	case v < 45:
		return "http://" + t + "/"
	case v < 55:
		return "http://" + t + "/" + path
	case v < 62:
		return "http://" + t + "/?ref=" + p.reg + "&amp;utm_medium=link"
	case v < 69:
		return "//" + t + "/" + path
	case v < 75:
		return "HTTP://" + strings.ToUpper(t) + ":80/" + path
	case v < 80:
		return "http://" + t
	case v < 85:
		return "http://" + t + ":80/"
	case v < 90:
		return "http://" + t + "/#" + pick(p.lr, words)
	case v < 93:
		return " http://" + t + "/ "
	case v < 97:
		return "Http://" + titleCase(t) + "/"
	default:
		return "http://" + t + "/search?q=caf%C3%A9&amp;lang=en"
	}
}

// upperFirst upper-cases the first rune of s.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// titleCase upper-cases the first letter of each label.
func titleCase(host string) string {
	labels := strings.Split(host, ".")
	for k, l := range labels {
		if l != "" {
			labels[k] = strings.ToUpper(l[:1]) + l[1:]
		}
	}
	return strings.Join(labels, ".")
}

// sameHostHref returns a link that stays on the page's host (or, on pages
// with a <base> to another host, goes to that host).
func (p *page) sameHostHref() string {
	for {
		v := p.lr.intn(16)
		if p.s.base == baseOther && v >= 13 {
			// "#x" and "" resolve to the base host by URL rules, but many
			// crawlers skip them before resolving; keep them off such pages
			// so either reading gives the same hosts.
			continue
		}
		switch v {
		case 0:
			return "/about"
		case 1:
			return "/contact"
		case 2:
			return "/blog/"
		case 3:
			return "post/" + strconv.Itoa(1+p.lr.intn(400))
		case 4:
			return "/post/" + strconv.Itoa(1+p.lr.intn(400))
		case 5:
			return "./tag/" + pick(p.lr, words)
		case 6:
			return "../archive/" + strconv.Itoa(1996+p.lr.intn(29)) + "/"
		case 7:
			return "?page=" + strconv.Itoa(2+p.lr.intn(9))
		case 8:
			return "http://" + p.host + "/contact"
		case 9:
			return "HTTP://" + strings.ToUpper(p.host) + ":80/about"
		case 10:
			return "//" + p.host + "/tag/" + pick(p.lr, words)
		case 11:
			return "/search?q=caf%C3%A9&amp;lang=en"
		case 12:
			return "/private/admin"
		case 13:
			return "#comments"
		case 14:
			return "#"
		default:
			return ""
		}
	}
}

// excludedHref returns a link to a host the crawler excludes by default.
func (p *page) excludedHref() string {
	word := pick(p.lr, words)
	switch p.lr.intn(13) {
	case 0:
		return "https://www.facebook.com/" + word + strconv.Itoa(p.lr.intn(100))
	case 1:
		return "http://facebook.com/sharer.php?u=http%3A%2F%2F" + p.host + "%2F"
	case 2:
		return "HTTPS://M.FACEBOOK.COM/groups/" + word
	case 3:
		return "https://twitter.com/" + word
	case 4:
		return "https://mobile.twitter.com/intent/tweet?text=" + word + "&amp;url=http%3A%2F%2F" + p.host
	case 5:
		return "https://www.instagram.com/" + word + "/"
	case 6:
		return "https://www.linkedin.com:443/company/" + word
	case 7:
		return "http://www.google-analytics.com/collect?v=1&amp;tid=UA-" + strconv.Itoa(1000+p.lr.intn(9000))
	case 8:
		return "http://ad.doubleclick.net/clk;" + strconv.Itoa(p.lr.intn(1_000_000))
	case 9:
		return "http://ads." + p.reg + "/click?id=" + strconv.Itoa(p.lr.intn(10_000))
	case 10:
		return "http://analytics." + p.reg + "/px.gif"
	case 11:
		return "//ads.example-network.net/banner/" + word
	default:
		return "http://ADS." + strings.ToUpper(p.reg) + ":80/x"
	}
}

// otherHref returns a link a crawler must drop: another scheme, or malformed.
func (p *page) otherHref() string {
	switch p.lr.intn(9) {
	case 0:
		return "mailto:hello@" + p.host
	case 1:
		return "javascript:void(0)"
	case 2:
		return "tel:+441632960" + strconv.Itoa(100+p.lr.intn(900))
	case 3:
		return "ftp://files." + p.reg + "/pub/"
	case 4:
		return "data:text/plain,hello"
	case 5:
		return "http://[broken/"
	case 6:
		return "http://exa mple." + p.reg + "/"
	case 7:
		return "http://"
	default:
		return "JavaScript:alert('hi')"
	}
}

// noise writes a link that never adds a host to a correct crawler's list.
func (p *page) noise() {
	switch v := p.lr.intn(10); {
	case v < 5:
		p.link(p.sameHostHref(), pick(p.lr, []string{"read more", "older posts", "permalink", "comments", "about us"}))
	case v < 8:
		p.link(p.excludedHref(), pick(p.lr, []string{"Share", "Follow us", "Sponsored", "Like"}))
	default:
		p.link(p.otherHref(), pick(p.lr, []string{"email", "top", "call", "files"}))
	}
}

// item is a cross-host link of the article.
type item struct{ href, text string }

// items returns the cross-host links of the page in DOM order.
func (p *page) items() []item {
	var its []item
	if p.s.fault&CalendarTrap != 0 {
		its = append(its,
			item{"/calendar?date=2024-01-01", "Calendar"},
			item{"/a/", "Archive"},
			item{"http://d1.trap-" + p.host + "/", "Day one"})
	}
	if p.s.fault&LinksToPrivate != 0 {
		for _, h := range []string{"http://10.0.0.1/", "http://127.0.0.1:1/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/", "http://192.168.1.1/"} {
			its = append(its, item{h, "intranet"})
		}
	}
	for _, t := range p.s.out {
		name := p.w.linkName(t)
		its = append(its, item{p.inWebHref(name), displayName(p.w.sites[t].name)})
	}
	return its
}

// render writes the home page of a generated host: the head, the header,
// the article with most cross-host links, the blogroll with the rest,
// and the footer.
func (p *page) render() {
	title, desc := p.w.meta(p.i)
	name := displayName(p.host)
	target := p.w.cfg.PageBytes * (85 + p.lr.intn(31)) / 100
	its := p.items()

	p.renderHead(title, desc)
	p.renderHeader(title, name)
	inArticle := p.renderArticle(its)
	if p.write {
		// Leave room for the blogroll and the footer still to come.
		p.pad(target - (1200 + 70*(len(its)-inArticle)))
	}
	p.raw("</article>\n<aside>\n<h2>Blogroll</h2>\n<ul>\n")
	for _, it := range its[inArticle:] {
		p.raw("<li>")
		p.link(it.href, it.text)
		p.raw("</li>\n")
	}
	p.raw("</ul>\n</aside>\n</main>\n")
	p.renderFooter(name)
}

// renderHead writes the page up to <body>: the title (half of it after
// invalid bytes on a broken page), the description, a <base> of one of
// three kinds on some pages, and the links, scripts and styles that are
// not links to hosts.
func (p *page) renderHead(title, desc string) {
	titleHTML := escapeText(p.lr, title, false)
	if p.broken {
		titleHTML = titleHTML[:len(titleHTML)/2] + "\xff\xfe" + titleHTML[len(titleHTML)/2:]
	}
	p.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", titleHTML, "</title>\n")
	p.raw(`<meta name="description" content="`, escapeText(p.lr, desc, true), "\">\n")
	p.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	switch p.s.base {
	case baseOther:
		p.raw(`<base href="http://`, p.w.linkName(p.s.out[0]), "/\">\n")
	case baseSame:
		p.raw("<base href=\"/blog/\">\n")
	case baseTarget:
		p.raw("<base target=\"_blank\">\n")
	}
	p.raw(`<link rel="stylesheet" href="http://static.`, p.reg, "/css/site.css\">\n")
	p.raw(`<link rel="canonical" href="http://`, p.host, "/\">\n")
	p.raw("<link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\">\n")
	p.raw(`<script src="http://cdn.`, p.reg, "/js/app.js\" defer></script>\n")
	p.raw("<script>window.dataLayer = []; var tpl = '<a href=\"http://script.", p.reg, "/\">not a link</a>';</script>\n")
	p.raw("<style>a[href^=\"http\"] { color: #06c } .n { margin: 0 }</style>\n</head>\n<body>\n")
}

// renderHeader writes the site's header and navigation, then opens the
// article with its heading and byline.
func (p *page) renderHeader(title, name string) {
	p.raw("<header class=\"site-header\">\n")
	p.link("/", name)
	p.raw("\n<nav>\n<ul>\n")
	for k, n := 0, 3+p.lr.intn(5); k < n; k++ {
		p.raw("<li>")
		p.link(p.sameHostHref(), pick(p.lr, []string{"About", "Blog", "Archive", "Contact", "Tags", "Search", "Next page"}))
		p.raw("</li>\n")
	}
	p.raw("</ul>\n</nav>\n</header>\n<main id=\"main\">\n<article>\n<h1>", escapeText(p.lr, title, false), "</h1>\n")
	p.raw("<p class=\"byline\">By <a name=\"author\">", escapeText(p.lr, name, false), "</a> · <time datetime=\"2024-03-0", strconv.Itoa(1+p.lr.intn(9)), "\">March 2024</time></p>\n")
}

// renderArticle writes the article's paragraphs with the first three
// quarters of its (at least one), among noise, and returns how many.
func (p *page) renderArticle(its []item) int {
	inArticle := len(its) * 3 / 4
	if len(its) > 0 && inArticle == 0 {
		inArticle = 1
	}
	para := 0
	for k := 0; k < inArticle; {
		group := min(1+p.lr.intn(4), inArticle-k)
		p.raw("<p>")
		p.filler(1 + p.fr.intn(3))
		for _, it := range its[k : k+group] {
			if p.lr.chance(0.3) {
				p.noise()
				p.raw(" ")
			}
			p.link(it.href, it.text)
			p.raw(" ")
			p.filler(p.fr.intn(2))
		}
		p.raw("</p>\n")
		k += group
		para++
		switch para {
		case 1:
			if p.lr.chance(0.1) && len(p.s.out) > 0 && len(its) == len(p.s.out) {
				// <area> is not <a>: it points at a host already linked so
				// counting it or not gives the same hosts.
				p.raw("<div class=\"figure\"><img src=\"/img/map.png\" usemap=\"#m\" alt=\"\"><map name=\"m\"><area shape=\"rect\" coords=\"0,0,40,40\" href=\"http://",
					p.w.linkName(p.s.out[0]), "/map.html\" alt=\"map\"></map></div>\n")
			}
		case 2:
			p.raw("<!-- old mirror: <a href=\"http://old.", p.reg, "/\">old site</a> -->\n")
		}
	}
	return inArticle
}

// pad writes filler paragraphs and headings until the page has size
// bytes.
func (p *page) pad(size int) {
	for len(p.buf) < size {
		if p.fr.chance(0.2) {
			p.raw("<h2>")
			p.buf = p.appendSentence(p.buf)
			p.raw("</h2>\n")
		}
		p.raw("<p>")
		p.filler(3 + p.fr.intn(5))
		p.raw("</p>\n")
	}
}

// renderFooter writes the footer: share links, links of other schemes,
// the copyright line and its admin link.
func (p *page) renderFooter(name string) {
	p.raw("<footer>\n<p>Share: ")
	for k, n := 0, 2+p.lr.intn(3); k < n; k++ {
		p.link(p.excludedHref(), pick(p.lr, []string{"Facebook", "Twitter", "LinkedIn", "Instagram", "Ads"}))
		p.raw(" ")
	}
	p.raw("</p>\n<p>")
	for k, n := 0, 2+p.lr.intn(3); k < n; k++ {
		p.link(p.otherHref(), pick(p.lr, []string{"Email", "Top", "Call", "Files"}))
		p.raw(" · ")
	}
	p.raw("</p>\n<p>&copy; ", strconv.Itoa(1996+p.lr.intn(29)), " ", escapeText(p.lr, name, false), ". ")
	p.link(p.sameHostHref(), "Admin")
	p.raw("</p>\n")
	if p.write {
		p.raw("<p class=\"small\">")
		p.filler(1 + p.fr.intn(2))
		p.raw("</p>\n")
	}
	p.raw("</footer>\n</body>\n</html>\n")
}

// invalidPage renders the InvalidUTF8 page: invalid bytes, 10,000 unclosed
// elements (the kind of markup that exhausts a recursive parser or renderer)
// and only same-host links.
func (w *Web) invalidPage(i int) ([]byte, []string) {
	host := w.sites[i].name
	hrefs := []string{"/", "/about", "post/1", "http://" + host + "/contact"}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Broken \xff\xfe caf\xe9 \xc3\x28</title>\n</head>\n<body>\n<nav>")
	for _, h := range hrefs {
		b.WriteString("<a href=\"" + h + "\">home \xed\xa0\x80</a> ")
	}
	b.WriteString("</nav>\n")
	for k := 0; k < 10_000; k++ {
		b.WriteString("<div class=n>")
		if k%500 == 0 {
			b.WriteString("deep \xc3\x28 \xf8\x88\x80\x80\x80 ")
		}
	}
	b.WriteString("\n<p>Bottom \xff.</p>\n</body>\n</html>\n")
	return []byte(b.String()), hrefs
}

// home returns the home page body of host i and its hrefs. write false skips
// the markup and returns only the hrefs.
func (w *Web) home(i int, write bool) ([]byte, []string) {
	s := &w.sites[i]
	switch {
	case s.fault&opaque != 0:
		return nil, nil
	case s.fault&ManyLinks != 0:
		return linkFarm(write)
	case s.fault&InvalidUTF8 != 0:
		return w.invalidPage(i)
	case s.kind == kindLoop:
		return w.loopPage(i)
	case s.kind == kindSite:
		return w.renderSitePage(i, &s.pages.pages[0])
	case s.kind == kindScript, s.kind == kindTwin:
		return nil, nil // its answers are its Script's, or a redirect
	}
	p := w.newPage(i, write)
	p.render()
	return p.buf, p.hrefs
}

// links returns the hrefs of host i's home page.
func (w *Web) links(i int) []string {
	if sh := w.shellOf(i); sh != NoShell && !shellLinks(sh) {
		return nil
	}
	_, hrefs := w.home(i, false)
	return hrefs
}

const linkFarmSize = 100_000

// linkFarm renders the ManyLinks page.
func linkFarm(write bool) ([]byte, []string) {
	hrefs := make([]string, linkFarmSize)
	var buf []byte
	if write {
		buf = make([]byte, 0, linkFarmSize*56+256)
		buf = append(buf, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Link farm</title>\n</head>\n<body>\n<ul>\n"...)
	}
	for k := range hrefs {
		n := strconv.Itoa(k)
		hrefs[k] = "http://t" + n + ".linkfarm.test/"
		if write {
			buf = append(buf, "<li><a href=\""...)
			buf = append(buf, hrefs[k]...)
			buf = append(buf, "\">t"...)
			buf = append(buf, n...)
			buf = append(buf, "</a></li>\n"...)
		}
	}
	if write {
		buf = append(buf, "</ul>\n</body>\n</html>\n"...)
	}
	return buf, hrefs
}
