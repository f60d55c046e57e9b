package fakeweb

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"
)

// Shell makes a host's home page a JavaScript shell, whose links only a
// browser that runs its script sees; some shells are hostile to the browser.
// Config.Shells and Config.ShellEvery choose the hosts. A shell replaces the
// home page of a generated host without a fault that replaces it (SlowDrip,
// ..., BinaryHTML, ManyLinks, InvalidUTF8); on other hosts it does nothing.
//
// The home page of a shell is its title, description and <base> as before, an
// empty <div id="app"></div> and <script src="http://HOST/app.js">
// (https://HOST/app.js when the page is asked over TLS, as a site served
// over https writes it: a browser refuses an http script on an https page
// as mixed content); /app.js is the script.
type Shell uint8

// The shells. Web.Links gives a shell host's links as before (a crawl that
// renders sees them) unless said otherwise.
const (
	// NoShell is an ordinary page.
	NoShell Shell = iota
	// ShellLinks: app.js adds the page's links, 200 ms after it runs, with
	// DOM calls (createElement, setAttribute, appendChild).
	ShellLinks
	// ShellLoop: app.js never ends (for (;;) {}). No links.
	ShellLoop
	// ShellAlert: app.js calls alert, confirm and prompt, then does what
	// ShellLinks does.
	ShellAlert
	// ShellNavigate: app.js does what ShellLinks does, and 100 ms after it
	// runs sends the page to the seed host (location.href = ...).
	ShellNavigate
	// ShellHugeDOM: app.js adds 1,000 elements to the page every 10 ms,
	// without end. No links.
	ShellHugeDOM
	// ShellPopup: app.js opens the seed host ten times with window.open and
	// clicks a target=_blank link to it, then does what ShellLinks does.
	ShellPopup
	// ShellPrivate: the page also loads <script src> from
	// http://127.0.0.1:1/x.js and http://localhost:1/x.js, and app.js
	// fetches http://127.0.0.1:1/api, then does what ShellLinks does.
	ShellPrivate
	// ShellScriptDisallowed: ShellLinks, with a robots.txt that disallows
	// /app.js for every agent. No links: a polite browser never runs app.js.
	ShellScriptDisallowed
	shellEnd
)

var shellNames = []string{"NoShell", "ShellLinks", "ShellLoop", "ShellAlert", "ShellNavigate", "ShellHugeDOM", "ShellPopup", "ShellPrivate", "ShellScriptDisallowed"}

// String returns the shell's name.
func (s Shell) String() string {
	if int(s) < len(shellNames) {
		return shellNames[s]
	}
	return "Shell(?)"
}

// shellScriptDelay is how long app.js waits before it adds the links, in ms.
const shellScriptDelay = 200

// applyShells sets the shells of cfg.ShellEvery, then of cfg.Shells.
func (w *Web) applyShells() {
	if n := w.cfg.ShellEvery; n > 0 {
		for i := range w.sites {
			if i%n == n/3 {
				w.sites[i].shell = ShellLinks
			}
		}
	}
	for name, sh := range w.cfg.Shells {
		if i, ok := w.index[normalizeHost(name)]; ok && sh < shellEnd {
			w.sites[i].shell = sh
		}
	}
}

// shellOf returns the shell of host i: NoShell unless the host is a
// generated one whose page no fault replaces.
func (w *Web) shellOf(i int) Shell {
	s := &w.sites[i]
	if s.shell == NoShell || s.kind != kindGenerated || s.fault&(opaque|ManyLinks|InvalidUTF8) != 0 {
		return NoShell
	}
	return s.shell
}

// Shell returns the shell of host: NoShell for an ordinary page or a host
// not in the web.
func (w *Web) Shell(host string) Shell {
	i := w.lookup(host)
	if i < 0 {
		return NoShell
	}
	return w.shellOf(i)
}

// shellLinks reports whether a rendering crawl finds the links of shell sh.
func shellLinks(sh Shell) bool {
	switch sh {
	case ShellLoop, ShellHugeDOM, ShellScriptDisallowed:
		return false
	}
	return true
}

// shellPage renders the home page of shell host i, asked over TLS or not.
func (w *Web) shellPage(i int, overTLS bool) []byte {
	s := &w.sites[i]
	title, desc := w.meta(i)
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n<meta name=\"description\" content=\"")
	b.WriteString(html.EscapeString(desc))
	b.WriteString("\">\n")
	if href := w.base(i); href != "" {
		b.WriteString("<base href=\"" + href + "\">\n")
	}
	if s.shell == ShellPrivate {
		b.WriteString("<script src=\"http://127.0.0.1:1/x.js\"></script>\n<script src=\"http://localhost:1/x.js\"></script>\n")
	}
	scheme := "http"
	if overTLS {
		scheme = "https"
	}
	b.WriteString("</head>\n<body>\n<div id=\"app\"></div>\n<script src=\"" + scheme + "://" + s.name + "/app.js\"></script>\n</body>\n</html>\n")
	return []byte(b.String())
}

// shellScript renders /app.js of shell host i.
func (w *Web) shellScript(i int) []byte {
	sh := w.shellOf(i)
	seed := "http://" + w.sites[w.seedIndex].name + "/"
	var b strings.Builder
	b.WriteString("(function () {\n'use strict';\n")
	switch sh {
	case ShellLoop:
		b.WriteString("for (;;) {}\n})();\n")
		return []byte(b.String())
	case ShellHugeDOM:
		b.WriteString(`var app = document.getElementById('app');
setInterval(function () {
  var f = document.createDocumentFragment();
  for (var k = 0; k < 1000; k++) {
    var d = document.createElement('div');
    d.className = 'filler';
    d.textContent = 'Filler text that makes the document grow without end, element ' + k + '.';
    f.appendChild(d);
  }
  app.appendChild(f);
}, 10);
})();
`)
		return []byte(b.String())
	case ShellAlert:
		b.WriteString("alert('Welcome!');\nconfirm('Accept cookies?');\nprompt('Your name?');\n")
	case ShellNavigate:
		b.WriteString("setTimeout(function () { location.href = " + jsString(seed) + "; }, 100);\n")
	case ShellPopup:
		b.WriteString("for (var k = 0; k < 10; k++) { window.open(" + jsString(seed) + ", '_blank'); }\n")
		b.WriteString("var p = document.createElement('a'); p.href = " + jsString(seed) + "; p.target = '_blank'; document.body.appendChild(p); p.click(); p.remove();\n")
	case ShellPrivate:
		b.WriteString("if (window.fetch) { fetch('http://127.0.0.1:1/api').catch(function () {}); }\n")
	}
	_, hrefs := w.home(i, false)
	decoded := make([]string, len(hrefs))
	for k, h := range hrefs {
		decoded[k] = html.UnescapeString(h)
	}
	js, _ := json.Marshal(decoded)
	b.WriteString("var links = ")
	b.Write(js)
	b.WriteString(`;
function build() {
  var app = document.getElementById('app');
  var ul = document.createElement('ul');
  for (var k = 0; k < links.length; k++) {
    var li = document.createElement('li');
    var a = document.createElement('a');
    a.setAttribute('href', links[k]);
    a.textContent = 'Link ' + (k + 1);
    li.appendChild(a);
    ul.appendChild(li);
  }
  app.appendChild(ul);
}
setTimeout(build, `)
	b.WriteString(itoa(shellScriptDelay))
	b.WriteString(");\n})();\n")
	return []byte(b.String())
}

// shellReply answers / and /app.js of shell host i; ok is false for
// other paths.
func (w *Web) shellReply(i int, path string) (reply, bool) {
	switch path {
	case "/":
		return reply{http.StatusOK, func(rw http.ResponseWriter, r *http.Request) {
			writeBody(rw, http.StatusOK, "text/html; charset=utf-8", w.shellPage(i, r.TLS != nil))
		}}, true
	case "/app.js":
		return reply{http.StatusOK, func(rw http.ResponseWriter, _ *http.Request) {
			writeBody(rw, http.StatusOK, "text/javascript; charset=utf-8", w.shellScript(i))
		}}, true
	}
	return reply{}, false
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
